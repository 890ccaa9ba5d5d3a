package asof

import (
	"context"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Conversation is the chat's latest conversation in the active project
// at the moment, with its last messages.
type Conversation struct {
	ID     string    `json:"id"`
	LastAt time.Time `json:"last_at"`
	// Closed: forgotten or summarized by the moment; the next message
	// starts a new one.
	Closed   bool      `json:"closed,omitempty"`
	Messages []Message `json:"messages"`
}

// Message is one message of the conversation.
type Message struct {
	Turn string    `json:"turn"`
	Role string    `json:"role"` // user or assistant
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// turnPage is how many of the chat's turns are read at once, newest
// first, while looking for its latest conversation.
const turnPage = 50

// seenTurn is a turn folded up to the moment, with the times of the
// events that put its messages in a conversation.
type seenTurn struct {
	turn.Turn
	contextAt, readyAt time.Time
	closed             []string // conversations it closed
}

func (s *seenTurn) Observe(e domain.Event) {
	switch e.Type {
	case turn.ContextBuilt{}.EventType():
		s.contextAt = e.RecordedAt
	case turn.ReplyReady{}.EventType():
		s.readyAt = e.RecordedAt
	}
}

func (s *seenTurn) Apply(p domain.Payload, version int64, at time.Time) {
	s.Turn.Apply(p, version, at)
	if c, ok := p.(turn.ConversationClosed); ok {
		s.closed = append(s.closed, c.ConversationID)
	}
}

// messages are the turn's messages in its conversation as of the moment:
// the user's once its context was built, the reply once it was ready.
func (s *seenTurn) messages() []Message {
	out := []Message{{Turn: s.ID, Role: "user", Text: s.Received.Text, At: s.contextAt}}
	if s.Ready != nil {
		out = append(out, Message{Turn: s.ID, Role: "assistant", Text: s.Ready.Text, At: s.readyAt})
	}
	return out
}

// conversationWalk gathers the latest conversation while the chat's turns
// are read newest first.
type conversationWalk struct {
	project string
	conv    *Conversation
	closed  map[string]bool
	done    bool
}

// see takes one turn, newer ones first.
func (w *conversationWalk) see(t *seenTurn) {
	for _, id := range t.closed {
		w.closed[id] = true
	}
	c := t.Context
	if c == nil || c.ConversationID == "" || c.Project != w.project {
		return
	}
	switch {
	case w.conv == nil:
		w.conv = &Conversation{ID: c.ConversationID}
	case w.conv.ID != c.ConversationID:
		w.done = true // an older conversation: the latest is complete
		return
	}
	w.conv.Messages = append(t.messages(), w.conv.Messages...)
	w.done = t.ID == c.ConversationID // its first turn
}

// conversation folds the chat's turns received by the moment, newest
// first, until the latest conversation in project is whole, and tells
// whether it had been closed (forgotten in a turn, or summarized).
func (r *Reader) conversation(ctx context.Context, chat, project string, at Moment) (*Conversation, error) {
	w := &conversationWalk{project: project, closed: map[string]bool{}}
	for skip := 0; !w.done; skip += turnPage {
		ids, err := r.Index.SenderTurnsBefore(ctx, chat, at.At, turnPage, skip)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			t := &seenTurn{Turn: turn.Turn{ID: id}}
			if _, err := eventstore.FoldUntil(ctx, r.Store, r.Registry, domain.TurnStream(id), t, at.Keep); err != nil {
				return nil, err
			}
			if t.Received == nil || t.Received.Chat().Key() != chat {
				continue // a group's turn belongs to the group's conversation
			}
			if w.see(t); w.done {
				break
			}
		}
		if len(ids) < turnPage {
			break
		}
	}
	c := w.conv
	if c == nil {
		return nil, nil
	}
	for _, m := range c.Messages {
		c.LastAt = maxTime(c.LastAt, m.At)
	}
	c.Messages = c.Messages[max(0, len(c.Messages)-r.Messages):]
	summarized, err := r.summarized(ctx, c.ID, at)
	c.Closed = w.closed[c.ID] || summarized
	return c, err
}

// summarized reports whether the conversation's summary closed it by the
// moment.
func (r *Reader) summarized(ctx context.Context, id string, at Moment) (bool, error) {
	var s closings
	_, err := eventstore.FoldUntil(ctx, r.Store, r.Registry, summary.SummaryStream(id), &s, at.Keep)
	return slices.Contains(s.ids, id), err
}

// closings are the conversations a stream closed.
type closings struct{ ids []string }

func (c *closings) Apply(p domain.Payload, _ int64, _ time.Time) {
	if e, ok := p.(turn.ConversationClosed); ok {
		c.ids = append(c.ids, e.ConversationID)
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
