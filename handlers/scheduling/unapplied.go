package scheduling

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
)

// Bounds of the log read behind the read model by a store without a
// shared reader; past them the worker waits for the read model instead.
const (
	unappliedPage  = 250
	unappliedPages = 4
)

// unapplied reads the log after the read model's checkpoint and returns
// the chat's open turns received there, in log order. settled is false
// when one of the chat's turns received there has already completed (or
// was completed here): its exchange is not in the history yet, unless it
// is kept (kept: see pending); when an event of another stream
// than a turn's or a sender's profile, written for the chat or the
// message's sender (a conversation closed and summarized, a task), was
// logged before one of them: a turn's context is read from the read
// models, which must show what happened to its chat before its message
// (a profile is read from the log itself); and when the log after the
// checkpoint is not in the shared reader's memory: the worker then waits
// for the read model rather than read the log itself, which, while the
// read model lags, would cost every turn a read of everything it lags by.
func (s *Scheduler) unapplied(ctx context.Context, chat string, after int64, done map[string]bool) (open []projections.OpenTurn, settled, kept bool, err error) {
	byChat, ok, err := s.unappliedByChat(ctx, after)
	if err != nil || !ok {
		return nil, false, false, err
	}
	settled = true
	for _, t := range byChat[chat] {
		if done[t.id] && s.read.Kept().Holds(t.id) {
			kept = true // its exchange is kept (see pending)
			continue
		}
		if t.completed || done[t.id] {
			settled = false
			continue
		}
		settled = settled && !t.behind
		open = append(open, projections.OpenTurn{ID: t.id, Chat: chat})
	}
	return open, settled, kept, nil
}

// unappliedTurn is a turn received after the read model's checkpoint.
type unappliedTurn struct {
	id        string
	completed bool // its completion is after the checkpoint too
	behind    bool // another kind of stream was written for its chat before it
}

// unappliedScan is the log after a checkpoint, by chat, as the shared
// reader held it at generation gen (see Scheduler.tailGen).
type unappliedScan struct {
	after  int64
	gen    uint64
	byChat map[string][]unappliedTurn
}

// unappliedByChat returns the turns received after position after, by
// chat in log order; false when the log there is out of reach (see
// turnEventsAfter). Workers woken by the same growth of the shared
// reader share one scan: with a thousand workers waiting for their
// kicked turns, each scanning the window on every growth made a turn cost
// in proportion to the senders waiting.
func (s *Scheduler) unappliedByChat(ctx context.Context, after int64) (map[string][]unappliedTurn, bool, error) {
	s.scanMu.Lock()
	defer s.scanMu.Unlock()
	gen := s.tailGen.Load()
	// Only a scan of the shared reader's window, while the relay counts
	// its growth, can be shared.
	tail := s.tail()
	shared := s.applied != nil && tail != nil && tail.Following()
	if sc := s.scan; shared && sc != nil && sc.after == after && sc.gen == gen {
		return sc.byChat, true, nil
	}
	evs, ok, err := s.turnEventsAfter(ctx, after)
	if err != nil || !ok {
		return nil, false, err
	}
	byChat := s.turnsByChat(evs)
	if shared {
		s.scan = &unappliedScan{after: after, gen: gen, byChat: byChat}
	}
	return byChat, true, nil
}

// turnsByChat gathers the turns received in evs by chat, in log order,
// noting which completed there and which another kind of stream's
// events for their chat or sender came before.
func (s *Scheduler) turnsByChat(evs []domain.Event) map[string][]unappliedTurn {
	byChat := map[string][]unappliedTurn{}
	at := map[string]int{} // turn -> index in its chat's list
	chatOf := map[string]string{}
	touched := map[string]bool{} // chats and senders another kind of stream wrote for
	for _, e := range evs {
		id := domain.TurnIDFromStream(e.StreamID)
		switch {
		case id == "":
			// A sender's profile is read from the log, never from a read
			// model: its events hold no turn back.
			if e.Metadata.Sender != "" && !sender.IsSenderStream(e.StreamID) {
				touched[sender.SenderKey(e.Metadata.Channel, e.Metadata.Sender)] = true
			}
		case e.Type == turn.MessageReceived{}.EventType():
			chat := s.chatOf(e)
			chatOf[id], at[id] = chat, len(byChat[chat])
			behind := touched[chat] || touched[sender.SenderKey(e.Metadata.Channel, e.Metadata.Sender)]
			byChat[chat] = append(byChat[chat], unappliedTurn{id: id, behind: behind})
		case e.Type == turn.TurnCompleted{}.EventType():
			if chat, ok := chatOf[id]; ok {
				byChat[chat][at[id]].completed = true
			}
		}
	}
	return byChat
}

// turnEventsAfter returns the turns' MessageReceived and TurnCompleted
// events after position after, and the events of every stream that is
// not a turn's (few: see unapplied): from the shared reader's memory when it
// follows the log (false when after is behind its window), else read from
// the log within unappliedPages (false past them).
func (s *Scheduler) turnEventsAfter(ctx context.Context, after int64) ([]domain.Event, bool, error) {
	keep := func(e domain.Event) bool {
		return domain.TurnIDFromStream(e.StreamID) == "" ||
			e.Type == turn.MessageReceived{}.EventType() || e.Type == turn.TurnCompleted{}.EventType()
	}
	var out []domain.Event
	if tail := s.tail(); tail != nil && tail.Following() {
		// Only a read model lagging more than the window is behind it.
		ok := tail.Scan(after, func(e domain.Event) bool {
			if keep(e) {
				out = append(out, e)
			}
			return true
		})
		if ok {
			return out, true, nil
		}
		if tail.Following() {
			return nil, false, nil
		}
		out = nil
	}
	for page := 0; page < unappliedPages; page++ {
		evs, err := eventstore.ReadAfter(ctx, s.driver.Store, after, unappliedPage)
		if err != nil {
			return nil, false, fmt.Errorf("read the log after the turns read model: %w", err)
		}
		for _, e := range evs {
			if keep(e) {
				out = append(out, e)
			}
		}
		if len(evs) < unappliedPage {
			return out, true, nil
		}
		after = evs[len(evs)-1].Position
	}
	return nil, false, nil
}

// chatOf is the chat key of a MessageReceived event read from the log,
// decoded once per turn (the last chatsKept or more are remembered: every
// worker scanning the log behind the read model looks at each message,
// and decoding it each time made a turn cost in proportion to how far the
// read model lags). A payload that does not decode falls back to its
// sender's key (a private chat's): the driver reports that turn's failure
// when it runs it.
func (s *Scheduler) chatOf(e domain.Event) string {
	tn := domain.TurnIDFromStream(e.StreamID)
	if chat, ok := s.chats.Get(tn); ok {
		return chat
	}
	chat := sender.SenderKey(e.Metadata.Channel, e.Metadata.Sender)
	if p, err := s.driver.Registry.Decode(e); err == nil {
		if m, ok := p.(turn.MessageReceived); ok {
			chat = m.Chat().Key()
		}
	}
	s.chats.Put(tn, chat)
	return chat
}

// chatsKept bounds each generation of the chats remembered (chatOf).
const chatsKept = 4096
