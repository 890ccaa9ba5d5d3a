package engine

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/eventstore"
)

// Await tells the engine that a follower of this process waits for the
// read models to show what the log holds (a turn that must see the one
// before it, a command): until done is called, a process that applies
// them reads other processes' events as soon as they commit (Urgent).
// Otherwise it reads them at the store's lazy pace, in bigger batches:
// nearly every turn learns what it needs from this process's own
// appends, so nothing waits for the applier most of the time.
func (e *Engine) Await() (done func()) {
	e.mu.Lock()
	e.waiters++
	wake := e.wake
	e.mu.Unlock()
	if wake != nil {
		wake()
	}
	e.awaited.Notify()
	return func() {
		e.mu.Lock()
		e.waiters--
		e.mu.Unlock()
	}
}

// Urgent reports whether the engine applies a read model that a follower
// of this process waits for now (Await).
func (e *Engine) Urgent() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.held) > 0 && e.waiters > 0
}

// OnAwait sets what wakes the reader of the log when a wait begins, so
// that it reads at once instead of at its lazy pace.
func (e *Engine) OnAwait(wake func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wake = wake
}

// DefaultApplyPace is the least time between two batches an exclusive
// applier commits for a lane while nobody here waits for the read models
// (Engine.ApplyPace): a busy process's log grows at every append it
// makes, and a transaction per growth cost the database more than the
// few milliseconds of lag saved.
const DefaultApplyPace = eventstore.TailLazy

// pace waits, after a lane committed a batch it began at last, until
// e.ApplyPace has passed since, a follower here begins to wait for the read
// models, or ctx ends (hurry: the lane's subscription to Await). Only
// exclusive appliers pace; SQLite's engine and tools apply at once.
func (e *Engine) pace(ctx context.Context, last time.Time, hurry <-chan struct{}) {
	if e.exclusiveTTL == 0 || e.Urgent() {
		return
	}
	left := e.ApplyPace - time.Since(last)
	if left <= 0 {
		return
	}
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-hurry:
	case <-timer.C:
	}
}
