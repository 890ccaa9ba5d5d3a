package scheduling

import (
	"context"
	"log/slog"
	"time"
)

// coalesceOnce coalesces the head's burst; false when the worker must stop.
func (s *Scheduler) coalesceOnce(ctx context.Context, chat string, w *worker, head string, done map[string]bool, applied <-chan struct{}, log *slog.Logger) bool {
	if err := s.coalesce(ctx, chat, w, head, done, applied); err != nil {
		if ctx.Err() == nil {
			log.Error("scheduler: coalesce messages", "turn", head, "err", err)
		}
		return false
	}
	return true
}

// coalesce waits, before the chat's head turn starts, until the
// coalescing window has passed since the latest message of the burst
// behind it, then makes the head answer the whole burst (Driver.Coalesce).
// A burst is one sender's: in a group, Driver.Burst ends it at another
// member's message, which stays a turn of its own.
// Every message stays a turn of its own in the log; the merged ones are
// completed as merged, so the chat's order and a resume after a crash
// (the merge is recorded on the head before the others are marked) hold.
func (s *Scheduler) coalesce(ctx context.Context, chat string, w *worker, head string, done map[string]bool, applied <-chan struct{}) error {
	for {
		turns, h, err := s.pending(ctx, chat, w, done)
		if err != nil {
			return err
		}
		if h != ready {
			s.waitApplied(ctx, applied, h, w, done)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		if len(turns) == 0 || turns[0].ID != head {
			return nil
		}
		ids := make([]string, len(turns))
		for i, t := range turns {
			ids[i] = t.ID
		}
		burst, last, err := s.driver.Burst(ctx, ids)
		if err != nil {
			return err
		}
		left := time.Until(last.Add(s.window))
		if last.IsZero() || left <= 0 {
			return s.driver.Coalesce(ctx, head, burst[1:])
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(left):
		case <-w.wake: // another message: the window starts again from it
		}
	}
}
