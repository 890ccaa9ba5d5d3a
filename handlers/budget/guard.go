// Package budget is the spending guard every provider call passes:
// before a call it decides from the log whether the owner's limits
// (everything together and per sender, per day and per month, in the
// owner's time zone) leave room for it, pauses a loop or sender that
// calls the provider too often, alerts the owner at 80 % and 100 % of a
// limit, and records every refusal. Wrap puts it in front of a provider,
// so no caller can skip it; a caller tags its context with what the call
// is for (providers.WithCall).
package budget

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/providercalls"
	"github.com/omega-gateway/omega/providers"
)

// Ledger is the spend ledger read model.
type Ledger interface {
	Snapshot(ctx context.Context, day, month, window time.Time) (providercalls.Snapshot, error)
}

// Owner is where the owner's alerts go.
type Owner interface {
	Alert(ctx context.Context, text string) (channel, chat string, err error)
}

// Store is the log and the leases the guard needs.
type Store interface {
	eventstore.Store
	eventstore.Leases
}

// Config is the owner's limits and the runaway guard's bounds.
type Config struct {
	// Limits are for everything together; per-sender limits are on the log.
	Limits budget.Limits
	// Location is the owner's time zone: days and months start there.
	Location *time.Location
	// RunawayCalls calls of one loop (background work: a purpose of
	// omega's own, or a sender's scheduled actions, counted with all that
	// sender's calls) within RunawayWindow are allowed; the next pauses it
	// until the window has room. 0: no guard.
	RunawayCalls  int
	RunawayWindow time.Duration
	// Slots bounds the calls in flight at once per scope while a limit is
	// set; 0 is 64.
	Slots int
	// SlotTTL is how long a call's slot lasts unless renewed (a process
	// that dies frees it); 0 is 30s. Grace is how long a slot stays taken
	// after its call returned, so that the call's outcome is on the log
	// before another call counts the room it leaves; 0 is 500ms (an outcome is appended within milliseconds of its call).
	SlotTTL, Grace time.Duration
	// Language words the owner's alerts; empty is English.
	Language string
}

// Guard decides on provider calls. It is safe for concurrent use.
type Guard struct {
	cfg      Config
	store    Store
	registry *domain.Registry
	ledger   Ledger
	owner    Owner
	log      *slog.Logger
	tally    tally
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// New returns the guard; owner may be nil (alerts are then only logged).
func New(cfg Config, store Store, reg *domain.Registry, ledger Ledger, owner Owner, log *slog.Logger) (*Guard, error) {
	if store == nil || reg == nil || ledger == nil || log == nil {
		return nil, errors.New("budget: the guard needs a store, a registry, the ledger and a logger")
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.RunawayCalls < 0 || (cfg.RunawayCalls > 0 && cfg.RunawayWindow <= 0) {
		return nil, errors.New("budget: the runaway guard needs a positive number of calls and a window")
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 64
	}
	if cfg.SlotTTL <= 0 {
		cfg.SlotTTL = 30 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 500 * time.Millisecond
	}
	return &Guard{cfg: cfg, store: store, registry: reg, ledger: ledger, owner: owner, log: log}, nil
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Decision is the guard's answer on one call. An allowed call must call
// Done when it returns, which frees its slot.
type Decision struct {
	budget.Verdict
	// Paused is set when the runaway guard refused the call (Verdict is
	// then allowed as far as the limits go); ResetAt is when it may go.
	Paused bool
	slots  *slots
}

// Err is the provider error a refused call answers with; nil when allowed.
func (d Decision) Err(provider string) error {
	if d.Allowed && !d.Paused {
		return nil
	}
	msg := "the " + d.Period + " limit " + d.Limit.String() + " is spent until " + d.ResetAt.UTC().Format(time.RFC3339)
	if d.Paused {
		msg = "too many provider calls: paused until " + d.ResetAt.UTC().Format(time.RFC3339)
	}
	return &providers.Error{Class: providers.OverBudget, Provider: provider, Msg: msg, Until: d.ResetAt}
}

// Done frees the call's slot; safe on any decision, and more than once.
func (d Decision) Done() {
	if d.slots != nil {
		d.slots.release()
	}
}

// Allow decides on one call for what call says. Under every limit it
// proceeds (and holds a slot until Done); over one it is refused and
// BudgetExceeded recorded; a runaway loop is paused and LoopPaused
// recorded. Only an error reading the log or the ledger is an error:
// the call must then not be made.
func (g *Guard) Allow(ctx context.Context, call providers.Call) (Decision, error) {
	for wait := 10 * time.Millisecond; ; wait = min(wait*2, 500*time.Millisecond) {
		d, busy, err := g.try(ctx, call)
		if err != nil || !busy {
			return d, err
		}
		// Every slot the room leaves is taken: the calls in flight may
		// spend it. Wait for one to return and decide again.
		select {
		case <-ctx.Done():
			return Decision{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// try decides once; busy means the call has room but no free slot.
func (g *Guard) try(ctx context.Context, call providers.Call) (Decision, bool, error) {
	now := g.now()
	limited, err := g.scopes(ctx, call.Sender)
	if err != nil {
		return Decision{}, false, err
	}
	if len(limited) == 0 && (g.cfg.RunawayCalls == 0 || !call.Background) {
		return Decision{Verdict: budget.Verdict{Allowed: true}}, false, nil
	}
	s, err := g.spent(ctx, call, now)
	if err != nil {
		return Decision{}, false, err
	}
	scopes := s.scopes(limited)
	v := budget.Decide(scopes, call.Background, now, g.cfg.Location)
	g.alert(ctx, scopes, now)
	if !v.Allowed {
		return Decision{Verdict: v}, false, g.refused(ctx, call, v)
	}
	if d, paused, err := g.runaway(ctx, call, s, now, v); paused || err != nil {
		return d, false, err
	}
	sl, ok, err := g.takeSlots(ctx, scopes, s.Largest, now)
	if err != nil || !ok {
		return Decision{}, err == nil, err
	}
	return Decision{Verdict: v, slots: sl}, false, nil
}

// scopes are the limits that apply to a call for sender.
func (g *Guard) scopes(ctx context.Context, sender string) ([]budget.Scope, error) {
	var out []budget.Scope
	if !g.cfg.Limits.IsZero() {
		out = append(out, budget.Scope{Limits: g.cfg.Limits})
	}
	if sender == "" {
		return out, nil
	}
	var limits budget.SenderLimits
	if _, err := foldLimits(ctx, g, &limits); err != nil {
		return nil, err
	}
	if l, ok := limits.Of[sender]; ok {
		out = append(out, budget.Scope{Name: sender, Limits: l})
	}
	return out, nil
}

// refused records a refusal, logged as well.
func (g *Guard) refused(ctx context.Context, call providers.Call, v budget.Verdict) error {
	g.log.Warn("provider call refused: spending limit", "purpose", call.Purpose, "sender", call.Sender,
		"background", call.Background, "scope", v.Scope, "period", v.Period, "limit", v.Limit.String(), "reset_at", v.ResetAt)
	return g.record(ctx, budget.ExceededStream, eventstore.Any, budget.BudgetExceeded{
		Purpose: call.Purpose, Sender: call.Sender, Background: call.Background, Scope: v.Scope, Period: v.Period,
		Limit: v.Limit, Spent: v.Spent, ResetAt: v.ResetAt,
	})
}

func (g *Guard) record(ctx context.Context, stream string, expected eventstore.ExpectedVersion, p domain.Payload) error {
	e, err := domain.NewEventFrom(p, domain.Metadata{CausationID: "budget/" + uuid.NewString()})
	if err != nil {
		return err
	}
	_, err = g.store.Append(ctx, stream, expected, e)
	return err
}

// foldLimits reads every sender's limits from the log.
func foldLimits(ctx context.Context, g *Guard, l *budget.SenderLimits) (int64, error) {
	return eventstore.Fold(ctx, g.store, g.registry, budget.LimitsStream, l)
}
