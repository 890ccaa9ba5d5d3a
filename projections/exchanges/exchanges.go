// Package exchanges keeps what the turns read model will add to a chat's
// conversation for the turns this process completed: their exchanges
// (the user's message and the reply). A chat's next turn reads its
// conversation as the read model shows it with those added
// (projections.Queries.RecentConversation), so it need not wait for the
// read model to apply the turn before it.
package exchanges

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// Exchange is what the turns read model records of a turn in its chat's
// conversation: the user's message (a merged burst included) as it stood
// when the turn's context was built, and the reply. Times are in
// microseconds, as the read model keeps them.
type Exchange struct {
	Turn, Chat, Conversation, Project string
	User, Reply                       string
	UserAt, ReplyAt                   int64
}

// LastAt is the conversation's last activity once the exchange is in it.
func (x Exchange) LastAt() int64 { return max(x.UserAt, x.ReplyAt) }

// Of reads the exchange a completed turn of chat adds to the turns
// read model from the turn's events. It is false for a turn that did
// anything else a later turn's context reads from the read models (ran a
// command, closed a conversation, applied markers: tasks and the like) or
// that has no exchange (no conversation, no reply, or either recorded
// twice): a later turn waits for the read model to show such a turn.
func Of(reg *domain.Registry, chat string, evs []domain.Event) (Exchange, bool, error) {
	x := Exchange{Chat: chat}
	var input string
	var built, replied int
	for _, e := range evs {
		if !exchangeEvents[e.Type] {
			continue
		}
		p, err := reg.Decode(e)
		if err != nil {
			return Exchange{}, false, fmt.Errorf("exchange of %s: %w", e.StreamID, err)
		}
		at := e.RecordedAt.UnixMicro()
		switch ev := p.(type) {
		case turn.MessageReceived:
			x.Turn, input = domain.TurnIDFromStream(e.StreamID), ev.Text
		case turn.MessagesMerged:
			if len(ev.Texts) > 0 {
				input += "\n" + strings.Join(ev.Texts, "\n")
			}
		case turn.ContextBuilt:
			built++
			x.Conversation, x.Project, x.User, x.UserAt = ev.ConversationID, ev.Project, input, at
		case turn.ReplyReady:
			replied++
			x.Reply, x.ReplyAt = ev.Text, at
		case turn.MarkersApplied:
			if len(ev.Markers) > 0 {
				return Exchange{}, false, nil
			}
		default: // a command's answer, a closed conversation
			return Exchange{}, false, nil
		}
	}
	ok := x.Turn != "" && x.Conversation != "" && built == 1 && replied == 1
	return x, ok, nil
}

// exchangeEvents are the turn events Of looks at: those of the
// exchange and those that rule it out.
var exchangeEvents = map[string]bool{
	turn.MessageReceived{}.EventType():    true,
	turn.MessagesMerged{}.EventType():     true,
	turn.ContextBuilt{}.EventType():       true,
	turn.ReplyReady{}.EventType():         true,
	turn.MarkersApplied{}.EventType():     true,
	turn.CommandAnswered{}.EventType():    true,
	turn.ConversationClosed{}.EventType(): true,
}

// Set holds the exchanges of the turns this process completed lately, by
// chat, which the turns read model may not show yet. A nil *Set holds
// none.
type Set struct {
	mu     sync.Mutex
	byChat map[string][]Exchange
	order  []string // turns, oldest first
	chatOf map[string]string
}

// Bounds of what a Set keeps: far more than complete while a read
// model lags behind the log.
const (
	maxKept        = 1024
	maxKeptForChat = 16
)

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{byChat: map[string][]Exchange{}, chatOf: map[string]string{}}
}

// Loader reads a stream (eventstore.Store).
type Loader interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
}

// Keep keeps the exchange that turn, completed here, added to chat's
// conversation, read from its stream; a turn that did more (see Of) is
// not kept, and the chat's next turn waits for the read model to show it.
func (s *Set) Keep(ctx context.Context, src Loader, reg *domain.Registry, chat, tn string) error {
	if s == nil {
		return nil
	}
	evs, err := src.Load(ctx, domain.TurnStream(tn), 1)
	if err != nil {
		return fmt.Errorf("keep the exchange of turn %s: %w", tn, err)
	}
	x, ok, err := Of(reg, chat, evs)
	if err != nil || !ok {
		return err
	}
	s.add(x)
	return nil
}

func (s *Set) add(x Exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.chatOf[x.Turn]; ok {
		return
	}
	if len(s.order) == maxKept {
		s.dropLocked(s.order[0])
	}
	if chat := s.byChat[x.Chat]; len(chat) == maxKeptForChat {
		s.dropLocked(chat[0].Turn)
	}
	s.byChat[x.Chat] = append(s.byChat[x.Chat], x)
	s.chatOf[x.Turn] = x.Chat
	s.order = append(s.order, x.Turn)
}

// Holds reports whether the exchange of turn is kept.
func (s *Set) Holds(turn string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.chatOf[turn]
	return ok
}

// Chat returns the exchanges kept for chat, in the order their turns ran.
func (s *Set) Chat(chat string) []Exchange {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.byChat[chat]...)
}

// Applied forgets the exchanges the read model shows.
func (s *Set) Applied(turns []string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tn := range turns {
		s.dropLocked(tn)
	}
}

func (s *Set) dropLocked(tn string) {
	chat, ok := s.chatOf[tn]
	if !ok {
		return
	}
	delete(s.chatOf, tn)
	s.order = slices.DeleteFunc(s.order, func(t string) bool { return t == tn })
	kept := slices.DeleteFunc(s.byChat[chat], func(x Exchange) bool { return x.Turn == tn })
	if len(kept) == 0 {
		delete(s.byChat, chat)
		return
	}
	s.byChat[chat] = kept
}
