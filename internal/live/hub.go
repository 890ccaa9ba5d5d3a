// Package live fans a streamed reply out to whoever watches its turn
// (the HTTP API's and the web UI's event streams): the latest visible
// text, never a queue of pieces, so memory stays bounded and a slow
// reader never holds up the turn that writes.
package live

import "sync"

// Snapshot is a turn's reply as it shows now.
type Snapshot struct {
	Text     string // the visible reply so far, markers removed
	Activity string // what the agent is doing, when it says
	Done     bool   // the stream ended; the final reply is in the log
}

// DefaultMaxTurns bounds how many turns the hub keeps at once.
const DefaultMaxTurns = 4096

// Hub holds the live snapshot of each streaming turn. The zero value is
// not usable; call NewHub.
type Hub struct {
	max   int
	mu    sync.Mutex
	turns map[string]*entry
}

type entry struct {
	snap Snapshot
	subs map[*Sub]struct{}
}

// NewHub returns a hub that keeps at most maxTurns turns (0: the
// default); beyond it, a new turn is not shown live (its final reply
// still is, from the log).
func NewHub(maxTurns int) *Hub {
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	return &Hub{max: maxTurns, turns: map[string]*entry{}}
}

// Publish sets a turn's visible text and activity and wakes its watchers.
func (h *Hub) Publish(turnID, text, activity string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entry(turnID)
	if e == nil {
		return
	}
	e.snap = Snapshot{Text: text, Activity: activity}
	e.wake()
}

// End marks a turn's stream over: its watchers are woken to read the
// final reply from the log, and the hub forgets the turn once none
// watches it.
func (h *Hub) End(turnID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.turns[turnID]
	if !ok {
		return
	}
	e.snap.Done = true
	e.wake()
	delete(h.turns, turnID) // watchers keep their entry
}

// Subscribe watches a turn, streaming or not yet; Close the Sub when done.
func (h *Hub) Subscribe(turnID string) *Sub {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &Sub{hub: h, turn: turnID, c: make(chan struct{}, 1)}
	if e := h.entry(turnID); e != nil {
		s.e = e
		e.subs[s] = struct{}{}
	}
	return s
}

// entry returns the turn's entry, made if there is room; h.mu is held.
func (h *Hub) entry(turnID string) *entry {
	if e, ok := h.turns[turnID]; ok {
		return e
	}
	if len(h.turns) >= h.max {
		return nil
	}
	e := &entry{subs: map[*Sub]struct{}{}}
	h.turns[turnID] = e
	return e
}

// wake tells every watcher that the snapshot changed, without waiting
// for any; h.mu is held.
func (e *entry) wake() {
	for s := range e.subs {
		select {
		case s.c <- struct{}{}:
		default: // already woken; it reads the latest snapshot
		}
	}
}

// Sub is one watcher of a turn.
type Sub struct {
	hub  *Hub
	turn string
	e    *entry // nil: the hub was full
	c    chan struct{}
}

// C receives when the snapshot changed since it was last read.
func (s *Sub) C() <-chan struct{} { return s.c }

// Snapshot returns the turn's reply as it shows now.
func (s *Sub) Snapshot() Snapshot {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if s.e == nil {
		return Snapshot{}
	}
	return s.e.snap
}

// Close stops watching; the hub forgets a turn nobody watches that has
// not begun to stream.
func (s *Sub) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.e == nil {
		return
	}
	delete(s.e.subs, s)
	if e, ok := h.turns[s.turn]; ok && e == s.e && len(e.subs) == 0 && e.snap == (Snapshot{}) {
		delete(h.turns, s.turn)
	}
	s.e = nil
}
