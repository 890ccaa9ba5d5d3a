package engine

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
