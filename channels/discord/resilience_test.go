package discord

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/discord/discordtest"
)

// inbox records what the channel delivered and how its health changed.
type inbox struct {
	mu     sync.Mutex
	got    []channels.Incoming
	health []channels.Health
}

func (b *inbox) deliver(_ context.Context, in channels.Incoming) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, in)
	return nil
}

func (b *inbox) report(h channels.Health) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.health = append(b.health, h)
}

func (b *inbox) all() []channels.Incoming {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]channels.Incoming(nil), b.got...)
}

func (b *inbox) ids() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, in := range b.got {
		out = append(out, in.PlatformID)
	}
	return out
}

func (b *inbox) states() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, h := range b.health {
		out = append(out, h.State)
	}
	return out
}

func eventually(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run starts ch against srv and returns what it delivers.
func run(t *testing.T, ch *Channel, srv *discordtest.Server) *inbox {
	t.Helper()
	box := &inbox{}
	ch.ReportHealth(box.report)
	done := make(chan error, 1)
	go func() { done <- ch.Start(t.Context(), box.deliver) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ch.Stop(ctx)
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	srv.WaitConnected(t)
	return box
}

func received(t *testing.T, box *inbox, id string) {
	t.Helper()
	eventually(t, "message "+id+" delivered", 15*time.Second, func() bool { return slices.Contains(box.ids(), id) })
}

func count(states []string, state string) int {
	n := 0
	for _, s := range states {
		if s == state {
			n++
		}
	}
	return n
}

func lastState(box *inbox) string {
	s := box.states()
	if len(s) == 0 {
		return channels.HealthUp
	}
	return s[len(s)-1]
}

// The double restarts, falls silent, stops acknowledging heartbeats,
// answers 502 and asks for a reconnect, with messages sent meanwhile:
// the channel notices each stall within the heartbeat interval plus the
// grace, resumes the session once the double answers, reports down,
// stalled and up again, and every message arrives once, in order.
func TestGatewayFaults(t *testing.T) {
	const interval, grace = 400 * time.Millisecond, time.Second
	srv := discordtest.New(t, testToken)
	srv.SetHeartbeatInterval(interval)
	cfg := testConfig(srv)
	cfg.StallGrace = grace
	box := run(t, newChannel(t, cfg), srv)
	var sent []string
	push := func(text string) string {
		id := srv.PushDM(alice, text)
		sent = append(sent, id)
		return id
	}
	received(t, box, push("before anything"))

	srv.Stop()
	eventually(t, "down reported", 10*time.Second, func() bool { return lastState(box) == channels.HealthDown })
	during := push("while the gateway was down")
	srv.Restart()
	received(t, box, during)
	eventually(t, "up reported", 5*time.Second, func() bool { return lastState(box) == channels.HealthUp })

	for _, fault := range []struct {
		name      string
		on, off   func()
		wantState string
	}{
		{"silent", func() { srv.Silent(true) }, func() { srv.Silent(false) }, channels.HealthStalled},
		{"no ACKs", func() { srv.StopAcking(true) }, func() { srv.StopAcking(false) }, channels.HealthStalled},
		{"502", func() { srv.Outage(http.StatusBadGateway) }, srv.EndOutage, channels.HealthDown},
	} {
		t.Run(fault.name, func(t *testing.T) {
			before := count(box.states(), fault.wantState)
			start := time.Now()
			fault.on()
			id := push("during " + fault.name)
			eventually(t, fault.name+": "+fault.wantState+" reported", interval+grace+3*time.Second, func() bool {
				return count(box.states(), fault.wantState) > before
			})
			t.Logf("%s noticed after %s", fault.name, time.Since(start).Round(time.Millisecond))
			fault.off()
			answered := time.Now()
			eventually(t, fault.name+": up again", cfg.BackoffMax+grace+2*time.Second, func() bool { return lastState(box) == channels.HealthUp })
			t.Logf("%s: receiving again %s after the double answered", fault.name, time.Since(answered).Round(time.Millisecond))
			received(t, box, id)
		})
	}

	srv.Reconnect()
	received(t, box, push("after RECONNECT"))
	// A session Discord no longer holds cannot be resumed: the channel
	// identifies again, and Discord replays nothing of the old one; the
	// message sent in between is read back from the channel's history.
	srv.InvalidateSession()
	srv.Reconnect()
	received(t, box, push("between the sessions"))
	received(t, box, push("in the new session"))
	identifies, resumes := srv.Counts()
	if identifies != 2 || resumes < 4 {
		t.Errorf("%d IDENTIFYs and %d RESUMEs, want 2 (the first and after INVALID_SESSION) and every other reconnection resumed", identifies, resumes)
	}
	if got := box.ids(); !slices.Equal(got, sent) {
		t.Fatalf("delivered %v, want each of %v once, in order", got, sent)
	}
}

// Stop ends Start at once even while the gateway accepted the connection
// and sends nothing (Open waits for HELLO).
func TestStopWhileTheGatewayIsSilent(t *testing.T) {
	srv := discordtest.New(t, testToken)
	srv.Silent(true)
	cfg := testConfig(srv)
	cfg.StallGrace = time.Minute
	ch := newChannel(t, cfg)
	done := make(chan error, 1)
	go func() { done <- ch.Start(t.Context(), (&inbox{}).deliver) }()
	eventually(t, "a connection to the gateway", 5*time.Second, func() bool { return len(srv.Requests("GET /gateway")) > 0 })
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Stop(ctx); err != nil {
		t.Fatalf("Stop with Open blocked for a minute: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A bot whose Message Content intent is off is refused (close 4014):
// the channel says how to fix it in its health record and waits minutes,
// not seconds, before trying again.
func TestRefusedIntentIsReportedNotHammered(t *testing.T) {
	srv := discordtest.New(t, testToken)
	srv.DisallowMessageContent()
	var waits []time.Duration
	var mu sync.Mutex
	ch, err := New(testConfig(srv), quiet, WithSleep(func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		<-ctx.Done()
		return ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	box := &inbox{}
	ch.ReportHealth(box.report)
	done := make(chan error, 1)
	go func() { done <- ch.Start(t.Context(), box.deliver) }()
	eventually(t, "down reported", 5*time.Second, func() bool { return lastState(box) == channels.HealthDown })
	box.mu.Lock()
	why := box.health[0].Err
	box.mu.Unlock()
	if !strings.Contains(why, "Message Content Intent") {
		t.Errorf("health says %q", why)
	}
	eventually(t, "a wait", 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(waits) > 0 })
	mu.Lock()
	if len(waits) != 1 || waits[0] != refusedRetry {
		t.Errorf("waits %v, want one of %s", waits, refusedRetry)
	}
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
