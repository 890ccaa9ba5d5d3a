package scheduling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/projections"
)

// runTurn runs a turn through the router's turn handler. A turn the
// router gave up on (poisoned, recorded as MessagePoisoned) is abandoned
// with a failure notice to its sender, so that it does not block the
// chat's later turns; an error is left for the caller to retry.
func (s *Scheduler) runTurn(ctx context.Context, chat string, w *worker, head string, done, acked map[string]bool, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- s.turns.Run(ctx, head) }()
	err := s.waitTurn(ctx, chat, w, head, errc, done, acked, log)
	var poisoned *messaging.PoisonedError
	if errors.As(err, &poisoned) && ctx.Err() == nil {
		return s.driver.Abandon(ctx, head, poisoned.Reason)
	}
	return err
}

// waitTurn waits for the running turn, acknowledging the messages that
// queue up behind it meanwhile.
func (s *Scheduler) waitTurn(ctx context.Context, chat string, w *worker, head string, errc <-chan error, done, acked map[string]bool, log *slog.Logger) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-w.wake:
			// A message sent right after a reply can arrive before the
			// turn's completion is recorded: it is not queued behind
			// anything, so it gets no acknowledgement. The driver marks
			// the turn replied before the reply goes out, so whatever
			// the timing, a message written after reading the reply
			// finds the mark (or, later, the completion in the log).
			answered := func() bool { return s.driver.Replied.Has(head) }
			if answered() {
				log.Debug("scheduler: message after the reply; not acknowledged", "turn", head)
				continue
			}
			turns, _, err := s.pending(ctx, chat, w, done)
			if err != nil {
				continue
			}
			queued := slices.DeleteFunc(turns, func(t projections.OpenTurn) bool { return t.ID == head || t.Acked || acked[t.ID] })
			if len(queued) == 0 {
				continue // a wake with nothing new to acknowledge
			}
			if s.completed(ctx, head) {
				log.Debug("scheduler: message after the reply; not acknowledged", "turn", head)
				continue
			}
			s.ackQueued(ctx, queued, acked, answered, log)
		}
	}
}

// answered reports whether the head turn has replied: marked here, or its
// stream records its completion. The read model may show a head open that
// another process, or this one before a restart, answered: the messages
// behind it are then no queue.
func (s *Scheduler) answered(ctx context.Context, head string) func() bool {
	return func() bool { return s.driver.Replied.Has(head) || s.completed(ctx, head) }
}

// completed reports whether the turn's stream records its completion.
func (s *Scheduler) completed(ctx context.Context, tn string) bool {
	ok, err := s.completedErr(ctx, tn)
	return err == nil && ok
}

// completedErr is completed with the read's error.
func (s *Scheduler) completedErr(ctx context.Context, tn string) (bool, error) {
	evs, err := s.driver.Store.Load(ctx, domain.TurnStream(tn), 1)
	if err != nil {
		return false, fmt.Errorf("read turn %s: %w", tn, err)
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == turn.TurnCompleted{}.EventType(), nil
}

// ackQueued acknowledges the queued turns not acknowledged yet; it stops
// once answered reports that the turn ahead of them has replied. Asked
// right before each acknowledgement, after the queued message is on
// record, it makes the rule hold whatever the timing: a message is only
// acknowledged if the turn ahead was still unanswered after it arrived.
func (s *Scheduler) ackQueued(ctx context.Context, queued []projections.OpenTurn, acked map[string]bool, answered func() bool, log *slog.Logger) {
	for _, t := range queued {
		if t.Acked || acked[t.ID] {
			continue
		}
		if answered() {
			return
		}
		acked[t.ID] = true
		if err := s.driver.Ack(ctx, t.ID); err != nil && ctx.Err() == nil {
			log.Warn("acknowledge queued turn", "turn", t.ID, "err", err)
		}
	}
}

// waitApplied waits for the read models or the log to move on (h: what
// the turn waits for). Only a wait for the read models makes this
// process's applier, if it is one, read other processes' events at once.
// A turn waiting for its message's place in the log waits for the shared
// reader to read that message, when the reader awaits it, rather than
// look again at every read of the log: with a thousand messages waiting,
// looking at each on every read made a turn cost in proportion to the
// messages waiting.
func (s *Scheduler) waitApplied(ctx context.Context, applied <-chan struct{}, h hold, w *worker, done map[string]bool) {
	if h == forReadModel && s.await != nil {
		defer s.await()()
	}
	if read := s.kickedRead(h, w, done); read != nil {
		select {
		case <-ctx.Done():
		case <-read:
		case <-time.After(readPatience):
		}
		return
	}
	select {
	case <-ctx.Done():
	case <-applied:
	case <-time.After(50 * time.Millisecond):
	}
}

// readPatience bounds a wait for the shared reader to read a kicked
// message: the reader gives up awaiting a commit after a while, and a
// window dropped after a failed read ends the wait at once, so this is
// only a safety net.
const readPatience = time.Second

// kickedRead is, for a turn waiting for its message's place in the log,
// a channel closed once the shared reader has read the oldest message
// kicked here that is not done (pending found none of them in the log
// yet); nil when the reader does not await that message, or for any
// other wait.
func (s *Scheduler) kickedRead(h hold, w *worker, done map[string]bool) <-chan struct{} {
	tail := s.tail()
	if h != forLog || tail == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range w.kicked {
		if !done[id] {
			return tail.ReadOf(domain.TurnStream(id))
		}
	}
	return nil
}
