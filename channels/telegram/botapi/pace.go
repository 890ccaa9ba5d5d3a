package botapi

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Telegram allows about one message per second per chat (short bursts
// are tolerated) and about 30 per second overall. A chat's burst of three
// lets a typing indicator, an acknowledgement and the reply it announces
// all leave at once; a longer burst is spread at one per second.
const (
	chatRate    = rate.Limit(1)
	chatBurst   = 3
	globalRate  = rate.Limit(30)
	globalBurst = 30
	// maxChats bounds the per-chat limiter map; idle limiters are dropped.
	maxChats = 4096
)

// Pacer spaces outgoing messages and chat actions with token buckets so
// Telegram's flood control is rarely hit. A chat quiet for a second has a
// token, so its first message leaves at once.
type Pacer struct {
	mu     sync.Mutex
	global *rate.Limiter
	chats  map[string]*rate.Limiter
}

// NewPacer returns a pacer with every bucket full.
func NewPacer() *Pacer {
	return &Pacer{
		global: rate.NewLimiter(globalRate, globalBurst),
		chats:  map[string]*rate.Limiter{},
	}
}

// Reserve takes a token from the chat's and the global bucket and returns
// how long the caller must wait before sending.
func (p *Pacer) Reserve(chatID string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	chat := p.chatLimiter(chatID, now)
	return max(chat.ReserveN(now, 1).DelayFrom(now), p.global.ReserveN(now, 1).DelayFrom(now))
}

// TryAction takes a token for a chat action (typing) only if the chat's
// bucket is full, so an acknowledgement and the reply after the action
// still find theirs: a late typing indicator is worthless, and one must
// never make a message wait. It reports whether the action may be sent.
func (p *Pacer) TryAction(chatID string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	chat := p.chatLimiter(chatID, now)
	if chat.TokensAt(now) < chatBurst || p.global.TokensAt(now) < 1 {
		return false
	}
	return chat.AllowN(now, 1) && p.global.AllowN(now, 1)
}

// TryCourtesy takes a token for a message that may be dropped (an
// acknowledgement) only if one is free now in the chat's and the global
// bucket and another stays free for the message after it: the courtesy
// leaves at once or not at all, and never takes the reply's slot.
func (p *Pacer) TryCourtesy(chatID string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	chat := p.chatLimiter(chatID, now)
	if chat.TokensAt(now) < 2 || p.global.TokensAt(now) < 2 {
		return false
	}
	return chat.AllowN(now, 1) && p.global.AllowN(now, 1)
}

// chatLimiter returns the chat's limiter; callers hold p.mu.
func (p *Pacer) chatLimiter(chatID string, now time.Time) *rate.Limiter {
	if l, ok := p.chats[chatID]; ok {
		return l
	}
	if len(p.chats) >= maxChats {
		for id, l := range p.chats {
			if l.TokensAt(now) >= chatBurst {
				delete(p.chats, id) // full bucket: forgetting it changes nothing
			}
		}
	}
	l := rate.NewLimiter(chatRate, chatBurst)
	p.chats[chatID] = l
	return l
}

// previewReserve is how many tokens a preview update leaves in the chat's
// and the global bucket: the final reply after it must never wait.
const previewReserve = 1

// TryPreview takes a token for a preview update only if one stays free
// for the final reply; otherwise it reports how long until one does.
func (p *Pacer) TryPreview(chatID string, now time.Time) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	chat := p.chatLimiter(chatID, now)
	wait := max(untilTokens(chat, now, previewReserve+1), untilTokens(p.global, now, previewReserve+1))
	if wait > 0 {
		return false, wait
	}
	if !chat.AllowN(now, 1) || !p.global.AllowN(now, 1) {
		return false, 10 * time.Millisecond
	}
	return true, 0
}

// untilTokens is how long until l holds n tokens, rounded up to a
// millisecond so a caller woken then finds them.
func untilTokens(l *rate.Limiter, now time.Time, n float64) time.Duration {
	missing := n - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing/float64(l.Limit())*float64(time.Second)).Truncate(time.Millisecond) + time.Millisecond
}
