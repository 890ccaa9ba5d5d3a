package scheduling

import (
	"context"
	"slices"

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
// wait is true when the next turn cannot start yet: a turn completed here
// or after the checkpoint is not shown completed (the next turn's history
// must include it), or no kicked turn has been reached in the log.
func (s *Scheduler) pending(ctx context.Context, chat string, w *worker, done map[string]bool) (turns []projections.OpenTurn, wait bool, err error) {
	open, applied, err := s.chatQueue(ctx, chat)
	if err != nil {
		return nil, false, err
	}
	visible := map[string]bool{}
	for _, t := range open {
		visible[t.ID] = true
		if done[t.ID] {
			wait = true
			continue
		}
		turns = append(turns, t)
	}
	s.mu.Lock()
	w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return done[id] || visible[id] })
	kicked := slices.Clone(w.kicked)
	s.mu.Unlock()
	if wait || len(turns) > 0 || len(kicked) == 0 {
		return append(turns, kickedTurns(chat, kicked, nil)...), wait, nil
	}
	tail, settled, err := s.unapplied(ctx, chat, applied, done)
	if err != nil {
		return nil, false, err
	}
	reached := map[string]bool{}
	for _, t := range tail {
		reached[t.ID] = true
	}
	rest, err := s.dropCompleted(ctx, w, kickedTurns(chat, kicked, reached), done)
	if err != nil {
		return nil, false, err
	}
	return append(tail, rest...), !settled || (len(tail) == 0 && len(rest) > 0), nil
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
