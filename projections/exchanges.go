package projections

import (
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

// ExchangeOf reads the exchange a completed turn of chat adds to the turns
// read model from the turn's events. It is false for a turn that did
// anything else a later turn's context reads from the read models (ran a
// command, closed a conversation, applied markers: tasks and the like) or
// that has no exchange (no conversation, no reply, or either recorded
// twice): a later turn waits for the read model to show such a turn.
func ExchangeOf(reg *domain.Registry, chat string, evs []domain.Event) (Exchange, bool, error) {
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

// exchangeEvents are the turn events ExchangeOf looks at: those of the
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

// Exchanges are the exchanges of the turns this process completed lately,
// by chat, which the turns read model may not show yet: the next turn of
// the chat need not wait for the read model to apply them, since its
// context adds them to what the read model shows
// (Queries.RecentConversationWith). A nil *Exchanges holds none.
type Exchanges struct {
	mu     sync.Mutex
	byChat map[string][]Exchange
	order  []string // turns, oldest first
	chatOf map[string]string
}

// Bounds of what Exchanges keep: far more than complete while a read
// model lags behind the log.
const (
	exchangesKept       = 1024
	exchangesKeptByChat = 16
)

// NewExchanges returns an empty set.
func NewExchanges() *Exchanges {
	return &Exchanges{byChat: map[string][]Exchange{}, chatOf: map[string]string{}}
}

// Add keeps x, the exchange of a turn completed here.
func (s *Exchanges) Add(x Exchange) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.chatOf[x.Turn]; ok {
		return
	}
	if len(s.order) == exchangesKept {
		s.dropLocked(s.order[0])
	}
	if kept := s.byChat[x.Chat]; len(kept) == exchangesKeptByChat {
		s.dropLocked(kept[0].Turn)
	}
	s.byChat[x.Chat] = append(s.byChat[x.Chat], x)
	s.chatOf[x.Turn] = x.Chat
	s.order = append(s.order, x.Turn)
}

// Holds reports whether the exchange of turn is kept.
func (s *Exchanges) Holds(turn string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.chatOf[turn]
	return ok
}

// Chat returns the exchanges kept for chat, in the order their turns ran.
func (s *Exchanges) Chat(chat string) []Exchange {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.byChat[chat]...)
}

// Applied forgets the exchanges the read model shows.
func (s *Exchanges) Applied(turns []string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tn := range turns {
		s.dropLocked(tn)
	}
}

func (s *Exchanges) dropLocked(tn string) {
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
