package budget

import (
	"strconv"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
)

// LimitsStream holds every per-sender limit the owner set.
const LimitsStream = "budget-limits"

// ExceededStream holds the calls refused for a limit, and the loops paused
// by the runaway guard.
const ExceededStream = "budget"

// AlertStream is the stream of the owner's alert for a scope's limit
// reaching a share in the period starting at start: one alert per
// threshold and period, whichever process gets there first.
func AlertStream(scope, period string, start time.Time, percent int) string {
	if scope == "" {
		scope = "all"
	}
	return "budget-alert-" + scope + "-" + period + "-" + start.Format("2006-01-02") + "-" + strconv.Itoa(percent)
}

// BudgetSet records the owner's limits for one sender; zero amounts
// remove a limit.
type BudgetSet struct {
	Channel  string `json:"channel"`
	SenderID string `json:"sender_id"`
	Limits
}

// Key is the sender the limits are for, as the spend ledger names it.
func (e BudgetSet) Key() string { return sender.SenderKey(e.Channel, e.SenderID) }

// BudgetExceeded records a provider call not made because a limit was
// spent (for background work, its BackgroundShare).
type BudgetExceeded struct {
	Purpose    string    `json:"purpose"`
	Sender     string    `json:"sender,omitempty"` // the sender key the call was for
	Background bool      `json:"background,omitempty"`
	Scope      string    `json:"scope,omitempty"` // "" everything together, else a sender key
	Period     string    `json:"period"`
	Limit      Amount    `json:"limit"`
	Spent      Spend     `json:"spent"`
	ResetAt    time.Time `json:"reset_at"`
}

// LoopPaused records the runaway guard refusing a call: Loop (a sender
// key, or a background purpose) made more than Most calls within Window.
type LoopPaused struct {
	Loop    string    `json:"loop"`
	Purpose string    `json:"purpose"`
	Calls   int64     `json:"calls"`
	Most    int       `json:"most"`
	Window  string    `json:"window"`
	Until   time.Time `json:"until"`
}

func (BudgetSet) EventType() string      { return "BudgetSet" }
func (BudgetExceeded) EventType() string { return "BudgetExceeded" }
func (LoopPaused) EventType() string     { return "LoopPaused" }

// RegisterEvents registers the budget's events.
func RegisterEvents(r *domain.Registry) {
	r.Register(BudgetSet{}, 1)
	r.Register(BudgetExceeded{}, 1)
	r.Register(LoopPaused{}, 1)
}

// SenderLimits is the fold of LimitsStream: each sender's limits.
type SenderLimits struct {
	version int64
	Of      map[string]Limits
}

// Apply folds one event.
func (s *SenderLimits) Apply(p domain.Payload, version int64, _ time.Time) {
	s.version = version
	e, ok := p.(BudgetSet)
	if !ok {
		return
	}
	if s.Of == nil {
		s.Of = map[string]Limits{}
	}
	if e.IsZero() {
		delete(s.Of, e.Key())
		return
	}
	s.Of[e.Key()] = e.Limits
}

// Version is the stream version folded.
func (s *SenderLimits) Version() int64 { return s.version }
