package duework_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/omega-gateway/omega/handlers/duework"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fired struct {
	mu  sync.Mutex
	ids []string
	at  map[string]time.Time
	ch  chan string
}

func startClock(t *testing.T) (*duework.Clock, *fired) {
	t.Helper()
	router, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := duework.New(router, quiet, duework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fired{at: map[string]time.Time{}, ch: make(chan string, 100)}
	if err := c.Handle("test", func(_ context.Context, it duework.Item) error {
		f.mu.Lock()
		f.ids = append(f.ids, it.ID)
		f.at[it.ID] = time.Now()
		f.mu.Unlock()
		f.ch <- it.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = router.Run(ctx); done <- struct{}{} }()
	<-router.Running()
	go func() { _ = c.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done; c.Close() })
	return c, f
}

func (f *fired) wait(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-f.ch:
		if got != id {
			t.Fatalf("fired %s, want %s", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s never fired", id)
	}
}

// Items fire in due order at their due time; an item set sooner than the
// one the clock sleeps for wakes it; a removed or replaced item does not
// fire at its old time.
func TestClockFiresAtDueTimes(t *testing.T) {
	c, f := startClock(t)
	now := time.Now()
	c.Set(duework.Item{Kind: "test", ID: "late", Due: now.Add(600 * time.Millisecond)})
	c.Set(duework.Item{Kind: "test", ID: "gone", Due: now.Add(200 * time.Millisecond)})
	c.Set(duework.Item{Kind: "test", ID: "moved", Due: now.Add(250 * time.Millisecond)})
	c.Remove("test", "gone")
	c.Set(duework.Item{Kind: "test", ID: "moved", Due: now.Add(400 * time.Millisecond)})
	c.Set(duework.Item{Kind: "test", ID: "soon", Due: now.Add(100 * time.Millisecond)})
	f.wait(t, "soon")
	f.wait(t, "moved")
	f.wait(t, "late")
	if d := f.at["moved"].Sub(now); d < 400*time.Millisecond {
		t.Fatalf("moved fired after %v, before its new due time", d)
	}
	if d := f.at["soon"].Sub(now); d < 100*time.Millisecond {
		t.Fatalf("soon fired after %v, before it was due", d)
	}
	if c.Len() != 0 {
		t.Fatalf("%d items left", c.Len())
	}
	select {
	case id := <-f.ch:
		t.Fatalf("%s fired too", id)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestClockRejectsDoubleKind(t *testing.T) {
	router, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	c, err := duework.New(router, quiet, duework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, duework.Item) error { return nil }
	if err := c.Handle("x", h); err != nil {
		t.Fatal(err)
	}
	if err := c.Handle("x", h); err == nil {
		t.Fatal("a kind registered twice was accepted")
	}
	if _, err := duework.New(nil, quiet, duework.Options{}); err == nil {
		t.Fatal("a clock without a router was built")
	}
}
