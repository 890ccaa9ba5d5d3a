package scheduling

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/scheduling/openq"
	"github.com/omega-gateway/omega/projections"
)

// queueResync bounds how long the shared copy is moved forward in memory
// before it is read again whole.
const queueResync = time.Second

// withQueue calls fn with the open turns of every chat, from the shared
// copy when it is current, under the copy's lock: fn must copy what it
// keeps.
func (s *Scheduler) withQueue(ctx context.Context, fn func(q *openq.Snapshot)) error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	gen := s.gen.Load()
	if q := s.queue; q != nil && s.applied != nil && q.Gen == gen && time.Since(q.At) < queueResync {
		fn(q)
		return nil
	}
	at := time.Now()
	all, applied, err := s.read.OpenQueue(ctx)
	if err != nil {
		return err
	}
	s.queue = openq.New(gen, at, all, applied)
	fn(s.queue)
	return nil
}

// chatQueue is one chat's open turns and the read model's checkpoint,
// served from the shared copy.
func (s *Scheduler) chatQueue(ctx context.Context, chat string) (turns []projections.OpenTurn, applied int64, err error) {
	err = s.withQueue(ctx, func(q *openq.Snapshot) {
		turns, applied = q.Chat(chat), q.Applied
	})
	return turns, applied, err
}

// relay moves the shared copy forward with each signal that the turns read
// model moved, then passes the signal on to the scheduler's loop and
// workers; a signal for another read model's lane is not passed on.
func (s *Scheduler) relay(ctx context.Context) {
	if s.applied == nil {
		return
	}
	applied := s.applied(ctx)
	// A worker may also wait for a message received here to be read from
	// the log (unapplied): the shared reader's progress wakes it too.
	var (
		read   <-chan struct{}
		window logWindow
		holds  func(int64) bool
		behind time.Time // since when the copy waits for the window to reach the read model
		seen   = int64(-1)
	)
	tail := s.tail()
	if tail != nil {
		read, window, holds = tail.Grown(ctx), tail.Scan, tail.Holds
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-applied:
			if s.through != nil {
				last, ok := s.through()
				if ok && last == seen {
					continue
				}
				seen = last
			}
			s.followReadModel(window, holds, &behind)
			s.tailGen.Add(1)
			s.moved.Notify()
		case <-read:
			if !behind.IsZero() {
				s.followReadModel(window, holds, &behind)
			}
			s.tailGen.Add(1) // the window grew: scans behind the read model are stale
			s.moved.Notify()
		}
	}
}

// queueCatchUp bounds how long the shared copy waits for the window to
// read as far as the read model before it is read again whole.
const queueCatchUp = 250 * time.Millisecond

// followReadModel moves the shared copy to the read model's position.
// When another process applies the read model, its announcement may come
// before this process has read the events it applied (a process that
// applies nothing reads the log at its lazy pace): the copy then stays
// where it is, consistent, and moves when the window has grown that far,
// instead of the read model being read again whole each time.
func (s *Scheduler) followReadModel(window logWindow, holds func(int64) bool, behind *time.Time) {
	if s.advanceQueue(window, s.through) {
		*behind = time.Time{}
		return
	}
	if holds != nil && s.through != nil && (behind.IsZero() || time.Since(*behind) < queueCatchUp) {
		if last, ok := s.through(); ok && !holds(last) {
			if behind.IsZero() {
				*behind = time.Now()
			}
			return
		}
	}
	*behind = time.Time{}
	s.gen.Add(1) // the next look reads the read model
}

// tail is the store's shared reader, if it has one.
func (s *Scheduler) tail() *eventstore.Tail {
	if shared, ok := s.driver.Store.(interface{ Tail() *eventstore.Tail }); ok {
		return shared.Tail()
	}
	return nil
}

// logWindow is eventstore.Tail.Scan: the events after a position, from
// memory only.
type logWindow func(after int64, fn func(domain.Event) bool) bool

// queueEvents are the events that change what Queries.OpenQueue returns
// (a turn received, acknowledged or completed).
var queueEvents = map[string]bool{
	turn.MessageReceived{}.EventType(): true,
	turn.AckSent{}.EventType():         true,
	turn.TurnCompleted{}.EventType():   true,
}

// advanceQueue moves the shared copy to the position the turns read model
// was last moved to, applying the queue's events in between as the read
// model did; false when it cannot (no copy, no position, or the window
// does not hold the events in between), and the copy must be read again.
func (s *Scheduler) advanceQueue(window logWindow, through func() (int64, bool)) bool {
	if window == nil || through == nil {
		return false
	}
	last, ok := through()
	if !ok {
		return false
	}
	s.qmu.Lock()
	q := s.queue
	var from int64
	if q != nil {
		from = q.Applied
	}
	s.qmu.Unlock()
	if q == nil {
		return false
	}
	if last == from {
		return true
	}
	evs, ok := eventsThrough(window, from, last)
	if !ok {
		return false
	}
	// Decoded outside both locks: the window's and the copy's.
	received := map[string]projections.OpenTurn{}
	for _, e := range evs {
		if e.Type == (turn.MessageReceived{}).EventType() {
			received[e.ID.String()] = s.openTurnOf(e)
		}
	}
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.queue != q || q.Applied != from {
		return false // read again or moved meanwhile
	}
	q.Apply(evs, received)
	q.Applied = last
	return true
}

// eventsThrough returns the queue's events of turn streams after position
// from up to and including position last, from the window; false when the
// window does not hold them all.
func eventsThrough(window logWindow, from, last int64) ([]domain.Event, bool) {
	var evs []domain.Event
	reached := false
	if !window(from, func(e domain.Event) bool {
		if queueEvents[e.Type] && domain.TurnIDFromStream(e.StreamID) != "" {
			evs = append(evs, e)
		}
		reached = e.Position == last
		return !reached
	}) {
		return nil, false
	}
	return evs, reached
}

// openTurnOf is the open turn a MessageReceived read from the log starts,
// as the turns read model records it.
func (s *Scheduler) openTurnOf(e domain.Event) projections.OpenTurn {
	tn := domain.TurnIDFromStream(e.StreamID)
	t := projections.OpenTurn{ID: tn, ReceivedAt: e.RecordedAt,
		Sender: sender.SenderKey(e.Metadata.Channel, e.Metadata.Sender), Channel: e.Metadata.Channel}
	if p, err := s.driver.Registry.Decode(e); err == nil {
		if m, ok := p.(turn.MessageReceived); ok {
			t.Sender, t.Channel, t.Chat = projections.SenderKey(m.Channel, m.SenderID), m.Channel, m.Chat().Key()
		}
	}
	if t.Chat == "" {
		t.Chat = t.Sender
	}
	s.chats.Put(tn, t.Chat)
	return t
}
