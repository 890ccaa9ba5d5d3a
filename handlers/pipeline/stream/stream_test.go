package stream

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestStartNeedsItsCollaborators(t *testing.T) {
	if _, err := Start(context.Background(), Options{Now: time.Now, Logger: quiet}); err == nil {
		t.Fatal("a stream without a recorder started")
	}
}

func TestPreviewTextPutsTheActivityBelowTheReply(t *testing.T) {
	for _, tc := range []struct{ text, activity, want string }{
		{"so far", "", "so far"},
		{"", "reading a.go", "reading a.go"},
		{"so far", "reading a.go", "so far\n\nreading a.go"},
	} {
		if got := previewText(tc.text, tc.activity); got != tc.want {
			t.Errorf("previewText(%q, %q) = %q, want %q", tc.text, tc.activity, got, tc.want)
		}
	}
}

type watcher struct {
	mu    sync.Mutex
	texts []string
	ended bool
}

func (w *watcher) Publish(_, text, _ string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *watcher) End(string) { w.mu.Lock(); w.ended = true; w.mu.Unlock() }

// recorder keeps what a stream put on record at once and what it left for
// the turn's next record.
type recorder struct {
	mu               sync.Mutex
	written, pending []turn.ReplyStreamStarted
}

func (c *recorder) options(o Options) Options {
	o.Record = func(_ context.Context, e turn.ReplyStreamStarted) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.written = append(c.written, e)
		return nil
	}
	o.Defer = func(e turn.ReplyStreamStarted) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.pending = append(c.pending, e)
	}
	return o
}

func (c *recorder) seen() (written, pending []turn.ReplyStreamStarted) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written, c.pending
}

// preview is a chat's preview message with a platform id.
type preview struct {
	mu    sync.Mutex
	texts []string
}

func (p *preview) Update(_ context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.texts = append(p.texts, text)
	return nil
}

func (p *preview) ID() string { return "p-1" }

// offChat is a preview that leaves nothing in the chat (the HTTP API's).
type offChat struct{ preview }

func (*offChat) ID() string    { return "" }
func (*offChat) OffChat() bool { return true }

// The watchers see the text after a tool as a paragraph of its own, the
// first text is noted once, and Stop ends the live view. Shown only off
// the chat, it waits for the turn's next record: a turn resumed after a
// crash has no preview message to replace.
func TestReplyShowsToWatchersAndRecordsOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		preview channels.Preview
	}{
		{"no preview", nil},
		{"a preview off the chat", &offChat{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &watcher{}
			rec := &recorder{}
			r, err := Start(context.Background(), rec.options(Options{TurnID: "t1", Language: "English", Live: w, Preview: tc.preview, Now: time.Now, Logger: quiet}))
			if err != nil {
				t.Fatal(err)
			}
			r.OnDelta(providers.Delta{Text: "Looking."})
			waitFor(t, w, "Looking.")
			r.OnDelta(providers.Delta{Tool: "Read", ToolTarget: "a.go"})
			r.OnDelta(providers.Delta{Text: "Done."})
			waitFor(t, w, "Looking.\n\nDone.")
			r.Stop()
			if !w.ended {
				t.Error("the live view did not end")
			}
			written, pending := rec.seen()
			if len(written) != 0 || len(pending) != 1 || pending[0].VisibleMs < 1 {
				t.Errorf("written %+v, pending %+v; want one start with its time to show, left for the next record", written, pending)
			}
			if r.Shown() != (tc.preview != nil) {
				t.Errorf("shown %v with preview %v", r.Shown(), tc.preview)
			}
		})
	}
}

// A reply shown in the chat's preview message is put on record at once,
// with the message's id: a turn resumed after a crash replaces it.
func TestReplyInAPreviewIsRecordedAtOnce(t *testing.T) {
	w, p := &watcher{}, &preview{}
	rec := &recorder{}
	r, err := Start(context.Background(), rec.options(Options{TurnID: "t1", Language: "English", Live: w, Preview: p, Now: time.Now, Logger: quiet}))
	if err != nil {
		t.Fatal(err)
	}
	r.OnDelta(providers.Delta{Text: "Looking."})
	waitFor(t, w, "Looking.")
	r.Stop()
	written, pending := rec.seen()
	if len(pending) != 0 || len(written) != 1 || written[0].PreviewID != "p-1" || written[0].VisibleMs < 1 {
		t.Errorf("written %+v, pending %+v; want the start with the preview's id, written at once", written, pending)
	}
	if !r.Shown() {
		t.Error("not shown though the preview showed the text")
	}
}

func waitFor(t *testing.T, w *watcher, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		last := ""
		if len(w.texts) > 0 {
			last = w.texts[len(w.texts)-1]
		}
		w.mu.Unlock()
		if last == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("watchers never saw %q (saw %q)", want, strings.Join(w.texts, " | "))
}

func TestNudgesAreHeldWhileQuiet(t *testing.T) {
	sent := make(chan string, 10)
	stop := Nudges{First: time.Millisecond, Every: time.Millisecond, FirstText: "still", StillText: "still",
		Quiet: func() bool { return true }, Logger: quiet,
		Send: func(_ context.Context, text string) error { sent <- text; return nil }}.Start(context.Background())
	time.Sleep(20 * time.Millisecond)
	if n := stop(); n != 0 || len(sent) != 0 {
		t.Fatalf("%d nudges sent while the chat showed the reply", n)
	}
}
