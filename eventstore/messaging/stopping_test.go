package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore/messaging"
)

// slow is a command whose handler each test process decides.
type slow struct{ N int }

func (slow) CommandName() string { return "Slow" }

// runRouter runs a router on s whose Slow handler is handle, until the
// returned stop is called.
func runRouter(t *testing.T, s store, handle func(context.Context, *slow) error) (b *messaging.Buses, stop func()) {
	t.Helper()
	b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: registry(), Logger: quiet,
		Announcer: s.(messaging.Announcer), MaxRetries: 1, InitialInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddCommandHandlers(context.Background(), cqrs.NewCommandHandler("Slow", handle)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Router.Run(ctx) }()
	<-b.Router.Running()
	return b, func() {
		_ = b.Router.Close()
		cancel()
		<-done
		b.Close()
	}
}

// A command whose handler a stopping process cuts off is not recorded as
// failed: it goes, unacknowledged, to the next process, which handles it.
func TestCommandCutOffByStopGoesToTheNextProcess(t *testing.T) {
	open := processes(t)
	first, next, reg := open(), open(), registry()

	started := make(chan struct{}, 1)
	b, stop := runRouter(t, first, func(ctx context.Context, _ *slow) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	id, err := b.Send(context.Background(), &slow{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first process never handled the command")
	}
	stop()
	if evs, err := first.Load(context.Background(), system.CommandStream(id), 0); err != nil || len(evs) != 0 {
		t.Fatalf("outcome of a command cut off by a stop: %d events (%v), want none", len(evs), err)
	}
	if evs, err := first.Load(context.Background(), system.PoisonStream("Slow"), 0); err != nil || len(evs) != 0 {
		t.Fatalf("poisoned: %d events (%v), want none", len(evs), err)
	}

	handled := make(chan int, 1)
	_, stopNext := runRouter(t, next, func(_ context.Context, c *slow) error {
		handled <- c.N
		return nil
	})
	defer stopNext()
	if err := messaging.Wait(context.Background(), next, reg, id, 20*time.Second); err != nil {
		t.Fatalf("the next process: %v", err)
	}
	if n := <-handled; n != 1 {
		t.Fatalf("handled %d", n)
	}
}
