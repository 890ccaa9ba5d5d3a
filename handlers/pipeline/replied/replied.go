// Package replied remembers the turns whose final reply went out before
// their completion was recorded, for the turn queue to read.
package replied

import "sync"

// Turns remembers the turns whose final reply this process has
// started to send, the last remembered of them. The reply goes out
// before the turn's last events are appended, and the read models follow
// later still, so for a while the log or the read model shows the turn
// unanswered although its sender may already read the answer and write
// again; the scheduler asks here before acknowledging a message as queued
// behind the turn. A turn stays answered once marked (even if recording
// its completion fails and it runs again: the sender has the answer).
//
// The zero value is not usable; a nil *Turns remembers nothing.
type Turns struct {
	mu    sync.Mutex
	order []string
	turns map[string]struct{}
}

// remembered bounds the set: far more turns than complete while a
// read model lags behind the log.
const remembered = 4096

// New returns an empty set.
func New() *Turns { return &Turns{turns: map[string]struct{}{}} }

// Mark notes that turn's final reply is on its way.
func (r *Turns) Mark(turn string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.turns[turn]; ok {
		return
	}
	if len(r.order) == remembered {
		delete(r.turns, r.order[0])
		r.order = r.order[1:]
	}
	r.order = append(r.order, turn)
	r.turns[turn] = struct{}{}
}

// Has reports whether turn's final reply has started to go out here.
func (r *Turns) Has(turn string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.turns[turn]
	return ok
}
