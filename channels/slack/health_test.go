package slack

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/slack/slacktest"
)

// healthLog keeps the health changes a channel reports.
type healthLog struct {
	mu  sync.Mutex
	got []channels.Health
}

func (h *healthLog) report(ev channels.Health) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, ev)
}

func (h *healthLog) states() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.got {
		out = append(out, ev.State)
	}
	return out
}

func (h *healthLog) last() string {
	s := h.states()
	if len(s) == 0 {
		return channels.HealthUp
	}
	return s[len(s)-1]
}

// texts are the delivered messages' texts, each once or the test fails.
func texts(t *testing.T, b *inbox) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, in := range b.all() {
		if out[in.Text] {
			t.Fatalf("%q delivered twice", in.Text)
		}
		out[in.Text] = true
	}
	return out
}

// The double restarts mid-conversation, stalls and answers 5xx: each
// outage is reported (down, stalled) and ended (up) once Slack answers,
// the stall within keep-alive plus grace, the reconnection within 5 s,
// and every message written meanwhile is delivered once.
func TestRestartStallAndOutage(t *testing.T) {
	s := slacktest.New(t)
	cfg := testConfig(s)
	ch := newChannel(t, cfg)
	h := &healthLog{}
	ch.ReportHealth(h.report)
	b := &inbox{}
	start(t, ch, b)
	waitFor(t, "the socket", s.Connected)
	s.PushDM(alice, "before the restart")
	waitFor(t, "the first message", func() bool { return texts(t, b)["before the restart"] })
	// A quiet but answering connection is no stall: pongs keep it.
	time.Sleep(3 * (cfg.KeepAlive + cfg.StallGrace))
	if got := h.states(); len(got) != 0 || s.Hellos() != 1 {
		t.Fatalf("an idle connection changed health %v, %d connections", got, s.Hellos())
	}

	s.Stop()
	waitFor(t, "down", func() bool { return h.last() == channels.HealthDown })
	s.PushDM(alice, "while it was down")
	back := time.Now()
	s.Start()
	waitFor(t, "the message written while down", func() bool { return texts(t, b)["while it was down"] })
	took := time.Since(back)
	t.Logf("receiving again %s after the server came back", took)
	if took > 5*time.Second {
		t.Errorf("receiving resumed %s after the server came back, want within 5s", took)
	}
	waitFor(t, "up", func() bool { return h.last() == channels.HealthUp })

	stalled := time.Now()
	s.Stall(true)
	s.PushDM(alice, "during the stall")
	waitFor(t, "stalled", func() bool { return h.last() == channels.HealthStalled })
	took, limit := time.Since(stalled), cfg.KeepAlive+cfg.StallGrace+time.Second
	t.Logf("stall noticed %s after it began (keep-alive plus grace %s)", took, cfg.KeepAlive+cfg.StallGrace)
	if took > limit {
		t.Errorf("stall noticed after %s, want within %s", took, limit)
	}
	s.Stall(false)
	waitFor(t, "the message written during the stall", func() bool { return texts(t, b)["during the stall"] })

	s.Outage("*", http.StatusBadGateway)
	waitFor(t, "down again", func() bool { return h.last() == channels.HealthDown })
	s.PushDM(alice, "during the outage")
	s.EndOutage("*")
	waitFor(t, "the message written during the outage", func() bool { return texts(t, b)["during the outage"] })
	waitFor(t, "every envelope acknowledged", func() bool { return s.Pending() == 0 })
	if got := len(texts(t, b)); got != 4 {
		t.Fatalf("delivered %d distinct messages, want 4", got)
	}
	want := []string{"down", "up", "stalled", "up", "down", "up"}
	waitFor(t, "the last recovery", func() bool { return len(h.states()) == len(want) })
	for i, s := range h.states() {
		if s != want[i] {
			t.Fatalf("health changes %v, want %v", h.states(), want)
		}
	}
}
