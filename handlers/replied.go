package handlers

import "sync"

// RepliedTurns remembers the turns whose final reply this process has
// started to send and whose completion is not yet on record. The reply
// goes out before the turn's last events are appended, so for a moment
// the log still shows the turn unanswered although its sender may already
// read the answer and write again; the scheduler asks here first, so a
// message sent in that moment is not acknowledged as queued.
//
// The zero value is not usable; a nil *RepliedTurns remembers nothing.
type RepliedTurns struct {
	mu    sync.Mutex
	turns map[string]struct{}
}

// NewRepliedTurns returns an empty set.
func NewRepliedTurns() *RepliedTurns { return &RepliedTurns{turns: map[string]struct{}{}} }

// Mark notes that turn's final reply is on its way.
func (r *RepliedTurns) Mark(turn string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.turns[turn] = struct{}{}
	r.mu.Unlock()
}

// Forget drops turn once its completion is on record (the log says it
// from then on).
func (r *RepliedTurns) Forget(turn string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.turns, turn)
	r.mu.Unlock()
}

// Has reports whether turn's final reply has started to go out here.
func (r *RepliedTurns) Has(turn string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.turns[turn]
	return ok
}
