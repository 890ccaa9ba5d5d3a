package whatsapp

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
	"github.com/omega-gateway/omega/channels/whatsapp/wapreview"
)

// fakeClock is the time of WithClock and WithTimer, moved by advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(x *fakeTimer) bool { return x == t })
		return len(c.timers) < n
	}
}

// advance moves the time by d and runs the timers due, earliest first.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTimer
		for _, t := range c.timers {
			if !t.at.After(c.now) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due == nil {
			c.mu.Unlock()
			return
		}
		c.timers = slices.DeleteFunc(c.timers, func(x *fakeTimer) bool { return x == due })
		c.mu.Unlock()
		due.f()
	}
}

func previewFixture(t *testing.T) (*Channel, *fakeClient, *fakeClock) {
	t.Helper()
	fc := newFakeClient()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	return NewWithClient(Config{}, fc, nil, WithClock(clock.Now), WithTimer(clock.After)), fc, clock
}

// reply is n words of Markdown in paragraphs of ten.
func reply(n int) string {
	var b strings.Builder
	b.WriteString("**Short answer:** ")
	for i := range n {
		fmt.Fprintf(&b, "word%d ", i)
		if i%10 == 9 {
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// streamWords plays a model writing text word by word: the first token
// after 800 ms, then a word every 25 ms, each update the text so far.
func streamWords(t *testing.T, clock *fakeClock, p channels.Preview, text string) {
	t.Helper()
	clock.advance(800 * time.Millisecond)
	words := strings.SplitAfter(text, " ")
	for i := range words {
		if err := p.Update(t.Context(), strings.Join(words[:i+1], "")); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		clock.advance(25 * time.Millisecond)
	}
}

// sendTextShows is what SendText shows for text on a fresh channel.
func sendTextShows(t *testing.T, text string) []string {
	t.Helper()
	c, fc, _ := previewFixture(t)
	if _, err := c.SendText(t.Context(), alice.String(), text); err != nil {
		t.Fatal(err)
	}
	return fc.visible()
}

func startAlice(t *testing.T, c *Channel) channels.Preview {
	t.Helper()
	p, err := c.StartPreview(t.Context(), alice.String())
	if err != nil {
		t.Fatalf("StartPreview: %v", err)
	}
	return p
}

func TestPreviewEditsOneMessage(t *testing.T) {
	c, fc, clock := previewFixture(t)
	text := reply(120)
	p := startAlice(t, c)
	streamWords(t, clock, p, text)
	if p.ID() != "OUT1" {
		t.Fatalf("preview id %q", p.ID())
	}
	edits := len(fc.sentMessages()) - 1
	res, err := c.FinishPreview(t.Context(), alice.String(), p.ID(), text)
	if err != nil {
		t.Fatal(err)
	}
	// 3.8 s of writing, an edit at most every 1.5 s.
	if edits < 1 || edits > 2 {
		t.Errorf("%d edits while writing for 3 s", edits)
	}
	got, want := fc.visible(), sendTextShows(t, text)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("the chat shows %q, SendText %q", got, want)
	}
	if res.Chunks != 1 || len(res.PlatformIDs) != 1 || res.PlatformIDs[0] != "OUT1" {
		t.Errorf("result %+v", res)
	}
	t.Logf("3.8 s streamed reply: %d sends (1 message, %d edits while writing, the final edit), %d visible message(s)",
		len(fc.sentMessages()), edits, len(got))
}

func TestPreviewRefusedEditsSendParagraphs(t *testing.T) {
	c, fc, clock := previewFixture(t)
	fc.refuseEdits = true
	text := reply(120)
	p := startAlice(t, c)
	streamWords(t, clock, p, text)
	res, err := c.FinishPreview(t.Context(), alice.String(), p.ID(), text)
	if err != nil {
		t.Fatal(err)
	}
	got := fc.visible()
	if len(got) < 3 || len(got) > 13 {
		t.Errorf("%d messages for 12 paragraphs written over 3 s", len(got))
	}
	// Every word once, in order: nothing repeated, nothing lost.
	want := strings.Join(strings.Fields(waformat.ToWhatsApp(text)), " ")
	if joined := strings.Join(strings.Fields(strings.Join(got, " ")), " "); joined != want {
		t.Errorf("the chat shows\n%q\nwant\n%q", joined, want)
	}
	if res.Chunks != len(got) || len(res.PlatformIDs) != len(got) {
		t.Errorf("result %+v for %d messages", res, len(got))
	}
}

func TestPreviewFinalEditRefused(t *testing.T) {
	c, fc, clock := previewFixture(t)
	text := reply(30)
	p := startAlice(t, c)
	streamWords(t, clock, p, text+" and more to come")
	fc.mu.Lock()
	fc.refuseEdits = true
	fc.mu.Unlock()
	if _, err := c.FinishPreview(t.Context(), alice.String(), p.ID(), text+" and more to come, the end."); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(strings.Join(fc.visible(), " ")), " ")
	want := strings.Join(strings.Fields(waformat.ToWhatsApp(text+" and more to come, the end.")), " ")
	if got != want {
		t.Errorf("the chat shows\n%q\nwant\n%q", got, want)
	}
}

func TestPreviewAfterRestart(t *testing.T) {
	c, fc, _ := previewFixture(t)
	p := startAlice(t, c)
	if err := p.Update(t.Context(), "before the crash"); err != nil {
		t.Fatal(err)
	}
	restarted := newWithClient(Config{}, fc, nil)
	res, err := restarted.FinishPreview(t.Context(), alice.String(), p.ID(), "before the crash, and after")
	if err != nil {
		t.Fatal(err)
	}
	if got := fc.visible(); len(got) != 1 || got[0] != "before the crash, and after" || res.PlatformIDs[0] != p.ID() {
		t.Fatalf("chat %q, result %+v", got, res)
	}

	// Edits refused after a restart: what the preview shows is unknown,
	// so the whole reply follows.
	p = startAlice(t, c)
	if err := p.Update(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	fc.mu.Lock()
	fc.refuseEdits = true
	fc.mu.Unlock()
	if _, err := newWithClient(Config{}, fc, nil).FinishPreview(t.Context(), alice.String(), p.ID(), "second reply"); err != nil {
		t.Fatal(err)
	}
	if got := fc.visible(); got[len(got)-1] != "second reply" {
		t.Fatalf("chat %q", got)
	}
}

func TestPreviewLongReplyOneMessageUntilFinal(t *testing.T) {
	c, fc, clock := previewFixture(t)
	text := reply(1500)
	p := startAlice(t, c)
	words := strings.SplitAfter(text, " ")
	for i := range words {
		if err := p.Update(t.Context(), strings.Join(words[:i+1], "")); err != nil {
			t.Fatal(err)
		}
		clock.advance(5 * time.Millisecond)
		if n := len(fc.visible()); n > 1 {
			t.Fatalf("%d messages while writing word %d", n, i)
		}
	}
	res, err := c.FinishPreview(t.Context(), alice.String(), p.ID(), text)
	if err != nil {
		t.Fatal(err)
	}
	got, want := fc.visible(), sendTextShows(t, text)
	if len(want) < 3 || strings.Join(got, "\x00") != strings.Join(want, "\x00") || res.Chunks != len(want) {
		t.Errorf("the chat shows %d messages, SendText %d; result %+v", len(got), len(want), res)
	}
}

func TestPreviewCoalesces(t *testing.T) {
	c, fc, clock := previewFixture(t)
	p := startAlice(t, c)
	for _, s := range []string{"one", "one two", "one two three"} {
		if err := p.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		clock.advance(100 * time.Millisecond)
	}
	if n := len(fc.sentMessages()); n != 1 {
		t.Fatalf("%d sends within the interval", n)
	}
	clock.advance(wapreview.Interval)
	if got := fc.visible(); len(got) != 1 || got[0] != "one two three" {
		t.Fatalf("the latest text is not shown after the interval: %q", got)
	}
}
