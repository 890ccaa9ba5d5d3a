package signal

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/signal/signaltest"
)

// inbox is a Deliver that keeps what it was given and can fail.
type inbox struct {
	mu   sync.Mutex
	got  []channels.Incoming
	fail int
}

func (b *inbox) deliver(_ context.Context, in channels.Incoming) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail > 0 {
		b.fail--
		return errors.New("store unavailable")
	}
	b.got = append(b.got, in)
	return nil
}

func (b *inbox) all() []channels.Incoming {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]channels.Incoming(nil), b.got...)
}

// texts are the delivered texts, each once or the test fails.
func (b *inbox) texts(t *testing.T) map[string]bool {
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

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func start(t *testing.T, ch *Channel, b *inbox) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ch.Start(context.Background(), b.deliver) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ch.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("start: %v", err)
		}
	})
}

// Direct messages are delivered; in a group only a mention of omega or a
// reply to it, with the chat being the group; attachments are fetched.
func TestDirectGroupsAndAttachments(t *testing.T) {
	s := newDouble(t)
	ch := newChannel(t, testConfig(s))
	b := &inbox{}
	start(t, ch, b)
	waitFor(t, "the stream", s.Connected)

	s.Push(signaltest.Message{From: alice, Name: "Alice", Text: "hello"})
	s.Push(signaltest.Message{From: alice, Text: "chatter", GroupID: "R3JvdXA="})
	ts := s.Push(signaltest.Message{From: alice, Text: "what now?", GroupID: "R3JvdXA=", MentionBot: true})
	s.Push(signaltest.Message{From: alice, Text: "and this?", GroupID: "R3JvdXA=", QuoteBot: true})
	png := []byte("\x89PNG\r\n\x1a\n pixels")
	s.Push(signaltest.Message{From: alice, Text: "look", Attachments: []signaltest.Attachment{{Name: "cat.png", MIME: "image/png", Data: png}}})
	waitFor(t, "four messages", func() bool { return len(b.all()) == 4 })
	got := b.all()
	if dm := got[0]; dm.ChatID != alice || dm.IsGroup || dm.SenderName != "Alice" || dm.Text != "hello" {
		t.Errorf("direct message %+v", dm)
	}
	if g := got[1]; g.ChatID != "group:R3JvdXA=" || !g.IsGroup || !g.Mentioned || g.Text != "what now?" || g.PlatformID != alice+":"+itoa(ts) {
		t.Errorf("mention %+v", g)
	}
	if q := got[2]; q.Text != "and this?" || !q.Mentioned {
		t.Errorf("reply %+v", q)
	}
	if a := got[3].Attachments; len(a) != 1 || string(a[0].Data) != string(png) || a[0].Name != "cat.png" || a[0].MIME != "image/png" {
		t.Errorf("attachments %+v", a)
	}

	if _, err := ch.SendText(t.Context(), "group:R3JvdXA=", "**Noon**, see `clock`"); err != nil {
		t.Fatal(err)
	}
	sent := s.SentTo("group:R3JvdXA=")
	if len(sent) != 1 || sent[0].Message != "Noon, see clock" || strings.Join(sent[0].TextStyles, " ") != "0:4:BOLD 10:5:MONOSPACE" {
		t.Fatalf("sent %+v", sent)
	}
	if err := ch.SendTyping(t.Context(), alice); err != nil || len(s.Typing()) != 1 {
		t.Fatalf("typing: %v %v", err, s.Typing())
	}
}

// A message the pipeline could not record is asked for again (the
// stream resumes after the last event recorded) and delivered once.
func TestUnrecordedMessageComesAgain(t *testing.T) {
	s := newDouble(t)
	ch := newChannel(t, testConfig(s))
	b := &inbox{fail: 1}
	start(t, ch, b)
	waitFor(t, "the stream", s.Connected)
	s.Push(signaltest.Message{From: alice, Text: "keep me"})
	s.Push(signaltest.Message{From: alice, Text: "and me"})
	waitFor(t, "both", func() bool { return len(b.texts(t)) == 2 })
	if got := b.all(); got[0].Text != "keep me" || got[1].Text != "and me" {
		t.Fatalf("delivered %+v", got)
	}
}

// The daemon restarts (messages meanwhile wait on Signal's server),
// stalls and answers 5xx: each is reported and ended, the stall within
// keep-alive plus grace, receiving resumes within 5 s, and every message
// is delivered once; a quiet stream with keep-alives is no stall.
func TestRestartStallAndOutage(t *testing.T) {
	s := newDouble(t)
	cfg := testConfig(s)
	ch := newChannel(t, cfg)
	h := &healthLog{}
	ch.ReportHealth(h.report)
	b := &inbox{}
	start(t, ch, b)
	waitFor(t, "the stream", s.Connected)
	s.Push(signaltest.Message{From: alice, Text: "before"})
	waitFor(t, "the first message", func() bool { return b.texts(t)["before"] })
	time.Sleep(3 * (cfg.KeepAlive + cfg.StallGrace))
	if got := h.states(); len(got) != 0 || s.Connects() != 1 {
		t.Fatalf("a quiet stream changed health %v (%d connections)", got, s.Connects())
	}

	s.Stop()
	waitFor(t, "down", func() bool { return h.last() == channels.HealthDown })
	s.Push(signaltest.Message{From: alice, Text: "while down"})
	back := time.Now()
	s.Start()
	waitFor(t, "the message written while down", func() bool { return b.texts(t)["while down"] })
	took := time.Since(back)
	t.Logf("receiving again %s after the server came back", took)
	if took > 5*time.Second {
		t.Errorf("receiving resumed %s after the daemon came back", took)
	}

	stalled := time.Now()
	s.Stall(true)
	waitFor(t, "stalled", func() bool { return h.last() == channels.HealthStalled })
	took, limit := time.Since(stalled), cfg.KeepAlive+cfg.StallGrace+time.Second
	t.Logf("stall noticed %s after it began (keep-alive plus grace %s)", took, cfg.KeepAlive+cfg.StallGrace)
	if took > limit {
		t.Errorf("stall noticed after %s, want within %s", took, limit)
	}
	s.Stall(false)
	s.Push(signaltest.Message{From: alice, Text: "after the stall"})
	waitFor(t, "the message after the stall", func() bool { return b.texts(t)["after the stall"] })

	s.Outage(http.StatusBadGateway)
	waitFor(t, "down again", func() bool { return h.last() == channels.HealthDown })
	s.EndOutage()
	s.Push(signaltest.Message{From: alice, Text: "after the outage"})
	waitFor(t, "the message after the outage", func() bool { return b.texts(t)["after the outage"] })
	want := []string{"down", "up", "stalled", "up", "down", "up"}
	waitFor(t, "the last recovery", func() bool { return len(h.states()) == len(want) })
	if got := strings.Join(h.states(), " "); got != strings.Join(want, " ") {
		t.Fatalf("health changes %s, want %s", got, want)
	}
}

// Signal's rate limit is waited out as long as it says; an unregistered
// number is ErrBlocked.
func TestRateLimitAndUnregistered(t *testing.T) {
	s := newDouble(t)
	var slept []time.Duration
	ch := newChannel(t, testConfig(s), WithSleep(func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}))
	s.RefuseNext("RATE_LIMIT_FAILURE", 9, 0)
	if _, err := ch.SendText(t.Context(), alice, "after the limit"); err != nil {
		t.Fatal(err)
	}
	if len(slept) != 1 || slept[0] != 9*time.Second || len(s.SentTo(alice)) != 1 {
		t.Fatalf("waited %v, sent %+v", slept, s.SentTo(alice))
	}
	s.RefuseNext("UNREGISTERED_FAILURE", 0, 0)
	if _, err := ch.SendText(t.Context(), "+4915199999999", "hi"); !errors.Is(err, channels.ErrBlocked) {
		t.Fatalf("unregistered: %v", err)
	}
	if _, err := ch.SendText(t.Context(), "bob", "hi"); !errors.Is(err, channels.ErrRejected) {
		t.Fatalf("bad chat: %v", err)
	}
	if _, err := ch.SendText(t.Context(), alice, " "); !errors.Is(err, channels.ErrRejected) {
		t.Fatalf("empty text: %v", err)
	}
}

func itoa(n int64) string { return strconvFormat(n) }
