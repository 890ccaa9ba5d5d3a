package budget

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/projections/providercalls"
	"github.com/omega-gateway/omega/providers"
)

// spending is what was spent when a call was decided, as the ledger
// counts it.
type spending struct {
	providercalls.Ledger
}

// tally is the guard's running count of the spend: the ledger's
// snapshot, read once per day (and whenever the period moves), plus every
// call event the log holds after that snapshot's checkpoint, read from
// the log before each decision. The past of a period never changes, so
// each decision reads only what was appended since the last one; and
// since it reads the log itself, not the read model, it is exact however
// far the read model lags, and sees every process's calls.
type tally struct {
	mu         sync.Mutex
	ready      bool
	day, month time.Time
	through    int64
	senders    map[string]providercalls.PeriodSpend
	all        providercalls.PeriodSpend
	largest    budget.Spend
	recent     []providercalls.Recent // oldest first
}

// spent brings the tally up to the log and reads what call's decision
// needs from it.
func (g *Guard) spent(ctx context.Context, call providers.Call, now time.Time) (spending, error) {
	t := &g.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	day := budget.PeriodStart(budget.Day, now, g.cfg.Location)
	month := budget.PeriodStart(budget.Month, now, g.cfg.Location)
	window := now.Add(-g.cfg.RunawayWindow)
	if !t.ready || !day.Equal(t.day) || !month.Equal(t.month) {
		if err := t.reload(ctx, g, day, month, window); err != nil {
			return spending{}, err
		}
	}
	if err := t.follow(ctx, g); err != nil {
		return spending{}, err
	}
	t.recent = slices.DeleteFunc(t.recent, func(r providercalls.Recent) bool { return r.At.Before(window) })
	return t.of(call), nil
}

// reload starts the tally again from the ledger's snapshot.
func (t *tally) reload(ctx context.Context, g *Guard, day, month, window time.Time) error {
	s, err := g.ledger.Snapshot(ctx, day, month, window)
	if err != nil {
		return err
	}
	t.ready, t.day, t.month, t.through = true, day, month, s.Through
	t.senders, t.largest, t.recent = s.Senders, s.Largest, s.Recent
	t.all = providercalls.PeriodSpend{}
	for _, p := range s.Senders {
		t.all.Day, t.all.Month = t.all.Day.Add(p.Day), t.all.Month.Add(p.Month)
	}
	if t.all.Month.Calls > 0 {
		t.largest.Calls = 1 // calls were seen: their size is known
	}
	return nil
}

// follow adds the calls the log holds after the tally.
func (t *tally) follow(ctx context.Context, g *Guard) error {
	for {
		evs, err := g.store.ReadAll(ctx, t.through, 1000)
		if err != nil {
			return fmt.Errorf("budget: read the log after the ledger: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, e := range evs {
			if events.IsProviderCall(e.Type) {
				if err := t.add(g.registry, e); err != nil {
					return err
				}
			}
			t.through = e.Position
		}
	}
}

// add counts one call event as the ledger would.
func (t *tally) add(reg *domain.Registry, e domain.Event) error {
	p, err := reg.Decode(e)
	if err != nil {
		return fmt.Errorf("budget: decode %s at %d: %w", e.Type, e.Position, err)
	}
	c, ok := usage.ProviderCallOf(p)
	if !ok || e.RecordedAt.Before(t.month) {
		return nil
	}
	one := budget.Spend{Tokens: c.Usage.Tokens(), USD: c.Usage.CostUSD, Calls: 1}
	sender := providercalls.SenderOf(e)
	s := t.senders[sender]
	s.Month, t.all.Month = s.Month.Add(one), t.all.Month.Add(one)
	if !e.RecordedAt.Before(t.day) {
		s.Day, t.all.Day = s.Day.Add(one), t.all.Day.Add(one)
	}
	t.senders[sender] = s
	t.largest = t.largest.Max(one)
	t.recent = append(t.recent, providercalls.Recent{At: e.RecordedAt, Sender: sender, Purpose: c.Purpose})
	return nil
}

// of is what a decision on call needs.
func (t *tally) of(call providers.Call) spending {
	s := spending{Ledger: providercalls.Ledger{Through: t.through, AllDay: t.all.Day, AllMonth: t.all.Month, Largest: t.largest}}
	if call.Sender != "" {
		mine := t.senders[call.Sender]
		s.SenderDay, s.SenderMonth = mine.Day, mine.Month
	}
	for _, r := range t.recent {
		switch {
		case call.Sender != "" && r.Sender == call.Sender:
			s.SenderWindow++
		case r.Sender == "" && r.Purpose == call.Purpose:
			s.LoopWindow++
		}
	}
	return s
}

// scopes fills the limited scopes with what each spent.
func (s spending) scopes(limited []budget.Scope) []budget.Scope {
	out := slices.Clone(limited)
	for i := range out {
		if out[i].Name == "" {
			out[i].Day, out[i].Month = s.AllDay, s.AllMonth
		} else {
			out[i].Day, out[i].Month = s.SenderDay, s.SenderMonth
		}
	}
	return out
}
