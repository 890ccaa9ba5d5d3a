package stream

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

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

// The watchers see the text after a tool as a paragraph of its own, the
// first text is put on record once, and Stop ends the live view.
func TestReplyShowsToWatchersAndRecordsOnce(t *testing.T) {
	w := &watcher{}
	var mu sync.Mutex
	var recorded []turn.ReplyStreamStarted
	r, err := Start(context.Background(), Options{TurnID: "t1", Language: "English", Live: w, Now: time.Now, Logger: quiet,
		Record: func(_ context.Context, e turn.ReplyStreamStarted) error {
			mu.Lock()
			defer mu.Unlock()
			recorded = append(recorded, e)
			return nil
		}})
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
	mu.Lock()
	defer mu.Unlock()
	if len(recorded) != 1 || recorded[0].VisibleMs < 1 {
		t.Errorf("recorded %+v, want one start with its time to show", recorded)
	}
	if r.Shown() {
		t.Error("shown without a preview")
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
