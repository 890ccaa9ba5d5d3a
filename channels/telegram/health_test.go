package telegram

import (
	"net/http"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

// healthLog collects the channel's health reports.
func healthLog(ch *Channel) <-chan channels.Health {
	out := make(chan channels.Health, 100)
	ch.ReportHealth(func(h channels.Health) { out <- h })
	return out
}

func nextHealth(t *testing.T, reports <-chan channels.Health) channels.Health {
	t.Helper()
	select {
	case h := <-reports:
		return h
	case <-time.After(10 * time.Second):
		t.Fatal("no health report")
		return channels.Health{}
	}
}

// failedPolls counts the getUpdates calls the double refused.
func failedPolls(srv *telegramtest.Server) int {
	n := 0
	for _, c := range srv.Calls("getUpdates") {
		if !c.Accepted() {
			n++
		}
	}
	return n
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// During a Bot API outage (server errors, or connections dropped) the
// poller's waits grow to 5 s and no further, so the first message after
// the API answers again is received within 5 s; the outage is reported
// once when it starts and once when it ends, with the failed polls.
func TestOutageBackoffIsCappedAndRecoveryIsReported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{{"server error", http.StatusBadGateway}, {"connection dropped", telegramtest.OutageReset}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			reports := healthLog(f.ch)
			f.srv.Outage("getUpdates", tc.status)
			got := f.start(t, nil)
			down := nextHealth(t, reports)
			if down.Channel != Name || down.State != channels.HealthDown || down.Err == "" || down.Failures != 1 {
				t.Fatalf("first report = %+v, want telegram down after one failed poll", down)
			}
			waitUntil(t, "eight failed polls", func() bool { return failedPolls(f.srv) >= 8 })
			f.srv.EndOutage("getUpdates")
			f.srv.PushText(42, 42, "are you back?")
			if in := receive(t, got); in.Text != "are you back?" {
				t.Fatalf("received %q", in.Text)
			}
			up := nextHealth(t, reports)
			if up.State != channels.HealthUp || up.Failures != failedPolls(f.srv) {
				t.Fatalf("recovery report = %+v, want up after %d failed polls", up, failedPolls(f.srv))
			}
			waits := f.sleeps.positive()
			want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
			for i, w := range want {
				if i >= len(waits) || waits[i] != w {
					t.Fatalf("waits between failed polls = %v, want them to start %v", waits, want)
				}
			}
			for _, w := range waits {
				if w > 5*time.Second {
					t.Fatalf("waited %v between polls, more than the 5 s cap: %v", w, waits)
				}
			}
		})
	}
}

// The cap is TELEGRAM_BACKOFF_MAX.
func TestBackoffCapIsConfigured(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.BackoffMax = 2 * time.Second })
	f.srv.Outage("getUpdates", http.StatusInternalServerError)
	f.start(t, nil)
	waitUntil(t, "four failed polls", func() bool { return len(f.sleeps.positive()) >= 4 })
	waits := f.sleeps.positive()[:4]
	want := []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits = %v, want %v", waits, want)
		}
	}
}

// A getUpdates that never answers is abandoned at the poll timeout plus
// the stall grace and reported as a stall; polling goes on and the next
// message arrives.
func TestStalledPollIsAbandonedAndReported(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.StallGrace = 200 * time.Millisecond })
	reports := healthLog(f.ch)
	f.srv.StallUpdates(true)
	got := f.start(t, nil)
	stalled := nextHealth(t, reports)
	if stalled.State != channels.HealthStalled || stalled.Failures != 1 {
		t.Fatalf("report = %+v, want stalled after one poll", stalled)
	}
	waitUntil(t, "the double to see the poll abandoned", func() bool {
		calls := f.srv.Calls("getUpdates")
		return len(calls) > 0 && calls[0].Error == "stalled"
	})
	f.srv.StallUpdates(false)
	f.srv.PushText(42, 42, "hello again")
	if in := receive(t, got); in.Text != "hello again" {
		t.Fatalf("received %q", in.Text)
	}
	if up := nextHealth(t, reports); up.State != channels.HealthUp {
		t.Fatalf("report = %+v, want up", up)
	}
}

// A channel started without a health function polls as before.
func TestNoHealthFunctionIsFine(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailNext("getUpdates", 2, http.StatusBadGateway, 0)
	got := f.start(t, nil)
	f.srv.PushText(1, 1, "hi")
	if in := receive(t, got); in.Text != "hi" {
		t.Fatalf("received %q", in.Text)
	}
}

// Flood control on getUpdates is waited out for as long as retry_after
// asks, even past the backoff cap, and no update is lost or repeated.
func TestPollHonoursRetryAfter(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.PushText(42, 42, "queued before the 429")
	f.srv.FailNext("getUpdates", 2, http.StatusTooManyRequests, 7)
	got := f.start(t, nil)
	if in := receive(t, got); in.Text != "queued before the 429" {
		t.Fatalf("received %q", in.Text)
	}
	waits := f.sleeps.positive()
	if len(waits) < 2 || waits[0] != 7*time.Second || waits[1] != 7*time.Second {
		t.Fatalf("waits after two 429s with retry_after 7 = %v, want 7s, 7s", waits)
	}
	f.srv.PushText(42, 42, "next")
	if in := receive(t, got); in.Text != "next" {
		t.Fatalf("received %q after the flood, want the next message once", in.Text)
	}
}
