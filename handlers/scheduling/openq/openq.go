// Package openq is the scheduler's copy of the open turns of every chat:
// as the turns read model showed them at a position, moved forward in
// memory with the events applied since, so that a turn does not pay for
// every open turn (a thousand waiting senders made each read of the read
// model a thousand rows).
package openq

import (
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections"
)

// Snapshot is the open turns of every chat at position Applied. It is not
// safe for concurrent use: the scheduler guards it.
type Snapshot struct {
	Gen     uint64                            // the scheduler's generation it was read at
	At      time.Time                         // when it was read
	Applied int64                             // the turns read model's position it shows
	byChat  map[string][]projections.OpenTurn // arrival order
	chatOf  map[string]string                 // open turn -> its chat
}

// New is the snapshot of the open turns all at position applied.
func New(gen uint64, at time.Time, all []projections.OpenTurn, applied int64) *Snapshot {
	q := &Snapshot{Gen: gen, At: at, Applied: applied,
		byChat: map[string][]projections.OpenTurn{}, chatOf: make(map[string]string, len(all))}
	for _, t := range all {
		q.add(t)
	}
	return q
}

// Chat returns a copy of chat's open turns, in arrival order.
func (q *Snapshot) Chat(chat string) []projections.OpenTurn { return slices.Clone(q.byChat[chat]) }

// Each calls fn with every chat's open turns (not to be kept or changed).
func (q *Snapshot) Each(fn func(chat string, turns []projections.OpenTurn)) {
	for chat, ts := range q.byChat {
		fn(chat, ts)
	}
}

// Apply applies the queue's events, with the turns their messages open
// (by event id), as the read model does.
func (q *Snapshot) Apply(evs []domain.Event, received map[string]projections.OpenTurn) {
	for _, e := range evs {
		tn := domain.TurnIDFromStream(e.StreamID)
		switch e.Type {
		case turn.MessageReceived{}.EventType():
			q.add(received[e.ID.String()])
		case turn.AckSent{}.EventType():
			q.acked(tn)
		case turn.TurnCompleted{}.EventType():
			q.completed(tn)
		}
	}
}

func (q *Snapshot) add(t projections.OpenTurn) {
	if _, ok := q.chatOf[t.ID]; ok {
		return
	}
	q.byChat[t.Chat] = append(q.byChat[t.Chat], t)
	q.chatOf[t.ID] = t.Chat
}

func (q *Snapshot) acked(tn string) {
	chat, ok := q.chatOf[tn]
	if !ok {
		return
	}
	ts := q.byChat[chat]
	if i := slices.IndexFunc(ts, func(t projections.OpenTurn) bool { return t.ID == tn }); i >= 0 {
		ts[i].Acked = true
	}
}

func (q *Snapshot) completed(tn string) {
	chat, ok := q.chatOf[tn]
	if !ok {
		return
	}
	delete(q.chatOf, tn)
	ts := slices.DeleteFunc(q.byChat[chat], func(t projections.OpenTurn) bool { return t.ID == tn })
	if len(ts) == 0 {
		delete(q.byChat, chat)
		return
	}
	q.byChat[chat] = ts
}
