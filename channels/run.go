package channels

import (
	"context"
	"fmt"
	"sync"
)

// Run is the lifecycle a receiving channel shares: Start receives until
// its context ends or Stop is called, Stop ends it and waits for Start
// to return, and a channel stopped before it started does not start.
// The zero value is ready to use.
type Run struct {
	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// Begin opens a run of Start: the context to receive under, ended by
// Stop, and end, which Start defers. ok is false once Stop was called:
// Start returns at once.
func (r *Run) Begin(ctx context.Context) (_ context.Context, end func(), ok bool) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		cancel()
		return ctx, func() {}, false
	}
	done := make(chan struct{})
	r.cancel, r.done = cancel, done
	return ctx, func() { cancel(); close(done) }, true
}

// Stop ends the run and waits for Start to return, at most until ctx
// ends; the error then names the channel.
func (r *Run) Stop(ctx context.Context, channel string) error {
	r.mu.Lock()
	r.stopped = true
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: stop: %w", channel, ctx.Err())
	}
}
