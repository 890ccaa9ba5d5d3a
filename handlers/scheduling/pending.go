package scheduling

import (
	"context"
	"slices"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections"
)

// pending returns the chat's turns to run, oldest first, and whether the
// worker must wait for the read model before starting the first of them.
//
// The order comes from the log, never from when a kick arrived. The read
// model shows the chat's turns received up to its checkpoint; when it
// shows none left to run and turns were kicked here, the events after the
// checkpoint are read from the log itself, so a turn that another process
// received before a turn kicked here is run first even while this
// process's read model has not applied it. A kicked turn that read has not
// reached (on PostgreSQL an earlier transaction may still be committing)
// is only acknowledged, never started.
//
// The hold says why the next turn cannot start yet: a turn completed
// after the checkpoint is not shown completed (the next turn's history
// must include it: forReadModel), or no kicked turn has been reached in
// the log (forLog). A turn completed here whose exchange is kept
// (Queries.Kept) holds nothing back: the next turn's context adds it to
// what the read model shows, unless that turn is a command, which reads
// the read model as it stands.
func (s *Scheduler) pending(ctx context.Context, chat string, w *worker, done map[string]bool) (turns []projections.OpenTurn, h hold, err error) {
	s.looks.Add(1)
	open, applied, err := s.chatQueue(ctx, chat)
	if err != nil {
		return nil, ready, err
	}
	turns, visible, wait, kept := s.shownOpen(open, done)
	s.mu.Lock()
	w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return done[id] || visible[id] })
	kicked := slices.Clone(w.kicked)
	s.mu.Unlock()
	if wait || len(turns) > 0 || len(kicked) == 0 {
		turns = append(turns, kickedTurns(chat, kicked, nil)...)
		if wait || (kept && s.readsAsShown(ctx, turns)) {
			return turns, forReadModel, nil
		}
		return turns, ready, nil
	}
	turns, h, keptAfter, err := s.afterCheckpoint(ctx, chat, w, applied, kicked, done)
	if err != nil {
		return nil, ready, err
	}
	if h == ready && (kept || keptAfter) && s.readsAsShown(ctx, turns) {
		h = forReadModel
	}
	return turns, h, nil
}

// hold is why a chat's next turn cannot start yet.
type hold uint8

const (
	ready hold = iota
	// forLog: a kicked message's place in the log is not read yet; the
	// shared reader reads this process's own commits promptly.
	forLog
	// forReadModel: the read models must show what the log holds first.
	forReadModel
)

// afterCheckpoint is pending for a chat the read model shows nothing to
// run for while turns were kicked here: the chat's turns received after
// the read model's checkpoint, read from the log, then the kicked turns
// that read has not reached.
func (s *Scheduler) afterCheckpoint(ctx context.Context, chat string, w *worker, applied int64, kicked []string, done map[string]bool) (turns []projections.OpenTurn, h hold, kept bool, err error) {
	tail, settled, kept, err := s.unapplied(ctx, chat, applied, done)
	if err != nil {
		return nil, ready, false, err
	}
	reached := map[string]bool{}
	for _, t := range tail {
		reached[t.ID] = true
	}
	rest, err := s.dropCompleted(ctx, w, kickedTurns(chat, kicked, reached), done)
	if err != nil {
		return nil, ready, false, err
	}
	switch {
	case !settled:
		h = forReadModel
	case len(tail) == 0 && len(rest) > 0:
		h = forLog
	}
	return append(tail, rest...), h, kept, nil
}

// shownOpen sorts the chat's turns the read model shows open: those to
// run; those it shows (visible); whether one completed here holds the
// next back (wait: its exchange was not kept) or was kept.
func (s *Scheduler) shownOpen(open []projections.OpenTurn, done map[string]bool) (turns []projections.OpenTurn, visible map[string]bool, wait, kept bool) {
	visible = map[string]bool{}
	for _, t := range open {
		visible[t.ID] = true
		switch {
		case !done[t.ID]:
			turns = append(turns, t)
		case s.read.Kept().Holds(t.ID):
			kept = true
		default:
			wait = true
		}
	}
	return turns, visible, wait, kept
}

// readsAsShown reports whether the next of turns must wait for the read
// model to show the turns completed before it: a command (/forget closes
// the conversation the read model shows as the latest) reads it without
// the exchanges kept here. So does a turn whose message cannot be read
// now.
func (s *Scheduler) readsAsShown(ctx context.Context, turns []projections.OpenTurn) bool {
	if len(turns) == 0 || s.driver.Commands == nil {
		return false
	}
	evs, err := s.driver.Store.Load(ctx, domain.TurnStream(turns[0].ID), 1)
	if err != nil || len(evs) == 0 {
		return true
	}
	p, err := s.driver.Registry.Decode(evs[0])
	m, ok := p.(turn.MessageReceived)
	return err != nil || !ok || s.driver.Commands.IsCommand(m.Text)
}

// dropCompleted takes out of the worker's kicked turns those whose stream
// records their completion: a turn received here that another process
// ran (it held the lease when the turn arrived) is neither open in the
// read model nor after its checkpoint, and without this check the worker
// would wait for it forever, holding the chat's lease. They count as
// done, so the next turn still waits for the read model to show them
// completed.
func (s *Scheduler) dropCompleted(ctx context.Context, w *worker, kicked []projections.OpenTurn, done map[string]bool) ([]projections.OpenTurn, error) {
	var rest []projections.OpenTurn
	for _, t := range kicked {
		completed, err := s.completedErr(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		if !completed {
			rest = append(rest, t)
			continue
		}
		done[t.ID] = true
		s.mu.Lock()
		w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return id == t.ID })
		s.mu.Unlock()
	}
	return rest, nil
}

func kickedTurns(chat string, kicked []string, skip map[string]bool) []projections.OpenTurn {
	var out []projections.OpenTurn
	for _, id := range kicked {
		if !skip[id] {
			out = append(out, projections.OpenTurn{ID: id, Chat: chat})
		}
	}
	return out
}
