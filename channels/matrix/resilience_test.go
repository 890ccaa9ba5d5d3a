package matrix

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// The homeserver restarts, stalls (takes requests, answers nothing) or
// fails (5xx, 429) mid-conversation: the channel reports the outage,
// resumes within StallGrace (or BackoffMax, or the 429's wait) of the
// homeserver answering, and delivers every message once.
func TestResilience(t *testing.T) {
	faults := []struct {
		name   string
		state  string
		inject func(w *world, p proxy)
		heal   func(t *testing.T, w *world, p proxy)
		// detect bounds the time from the fault to its report.
		detect time.Duration
	}{
		{"restart", "down", func(w *world, _ proxy) { w.d.Kill() }, func(t *testing.T, w *world, _ proxy) { w.d.Restart(t) }, 2 * time.Second},
		// A sync already waiting when the stall begins is answered (its
		// long poll ends), then the next one stalls: detection takes at
		// most SyncTimeout + StallGrace after that.
		{"stall", "stalled", func(_ *world, p proxy) { p.Stall() }, func(_ *testing.T, _ *world, p proxy) { p.Pass() }, 2*syncTimeout + stallGrace + time.Second},
		{"5xx", "down", func(_ *world, p proxy) { p.Fail(http.StatusBadGateway) }, func(_ *testing.T, _ *world, p proxy) { p.Pass() }, syncTimeout + time.Second},
		{"429", "down", func(_ *world, p proxy) { p.Fail(http.StatusTooManyRequests) }, func(_ *testing.T, _ *world, p proxy) { p.Pass() }, syncTimeout + time.Second},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			w := newWorld(t)
			p := w.d.NewProxy(t)
			ch, _ := w.channel(t, p.URL)
			b := run(t, ch)
			w.alice.SendText(t, w.dm, "before")
			waitFor(t, "before delivered", within, func() bool { return len(b.texts()) == 1 })

			faulted := time.Now()
			f.inject(w, p)
			waitFor(t, f.state+" reported", f.detect, func() bool { return slices.Equal(b.states(), []string{f.state}) })
			t.Logf("%s reported %s after the fault", f.state, time.Since(faulted).Round(time.Millisecond))
			if f.name == "restart" {
				f.heal(t, w, p)
				w.alice.SendText(t, w.dm, "during")
			} else {
				w.alice.SendText(t, w.dm, "during")
				time.Sleep(time.Second)
				f.heal(t, w, p)
			}
			healed := time.Now()
			waitFor(t, "up reported", 5*time.Second+time.Second, func() bool { return slices.Equal(b.states(), []string{f.state, "up"}) })
			t.Logf("up reported %s after the homeserver answered again", time.Since(healed).Round(time.Millisecond))
			w.alice.SendText(t, w.dm, "after")
			waitFor(t, "during and after delivered", within, func() bool { return len(b.texts()) >= 3 })
			time.Sleep(500 * time.Millisecond)
			if got := b.texts(); !slices.Equal(got, []string{"before", "during", "after"}) {
				t.Fatalf("delivered %q", got)
			}
		})
	}
}

// proxy is what a fault needs of matrixtest.Proxy.
type proxy interface {
	Stall()
	Fail(status int)
	Pass()
}
