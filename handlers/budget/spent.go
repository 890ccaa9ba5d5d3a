package budget

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/projections/providercalls"
	"github.com/omega-gateway/omega/providers"
)

// spending is what was spent when a call was decided: the ledger's sums
// with the calls the log holds after the ledger's checkpoint added, so
// the decision is exact however far the read model lags.
type spending struct {
	providercalls.Ledger
}

// spent reads the ledger and adds the log after it.
func (g *Guard) spent(ctx context.Context, call providers.Call, now time.Time) (spending, error) {
	ask := providercalls.LedgerAsk{
		Day:    budget.PeriodStart(budget.Day, now, g.cfg.Location),
		Month:  budget.PeriodStart(budget.Month, now, g.cfg.Location),
		Window: now.Add(-g.cfg.RunawayWindow),
		Sender: call.Sender,
		Loop:   call.Purpose,
	}
	l, err := g.ledger.Ledger(ctx, ask)
	if err != nil {
		return spending{}, err
	}
	s := spending{Ledger: l}
	if l.AllMonth.Calls > 0 {
		s.Largest.Calls = 1 // calls were seen: their size is known
	}
	types := events.ProviderCallTypes()
	for after := l.Through; ; {
		evs, err := g.store.ReadAll(ctx, after, 1000)
		if err != nil {
			return spending{}, fmt.Errorf("budget: read the log after the ledger: %w", err)
		}
		if len(evs) == 0 {
			return s, nil
		}
		for _, e := range evs {
			if !slices.Contains(types, e.Type) {
				continue
			}
			if err := s.add(g.registry, e, ask); err != nil {
				return spending{}, err
			}
		}
		after = evs[len(evs)-1].Position
	}
}

// add counts one event the ledger has not applied yet, as the ledger
// would.
func (s *spending) add(reg *domain.Registry, e domain.Event, ask providercalls.LedgerAsk) error {
	p, err := reg.Decode(e)
	if err != nil {
		return fmt.Errorf("budget: decode %s at %d: %w", e.Type, e.Position, err)
	}
	c, ok := usage.ProviderCallOf(p)
	if !ok {
		return nil
	}
	one := budget.Spend{Tokens: c.Usage.Tokens(), USD: c.Usage.CostUSD, Calls: 1}
	sender, at := providercalls.SenderOf(e), e.RecordedAt
	mine := ask.Sender != "" && sender == ask.Sender
	if !at.Before(ask.Month) {
		s.AllMonth = s.AllMonth.Add(one)
		s.Largest = s.Largest.Max(one)
		if mine {
			s.SenderMonth = s.SenderMonth.Add(one)
		}
	}
	if !at.Before(ask.Day) {
		s.AllDay = s.AllDay.Add(one)
		if mine {
			s.SenderDay = s.SenderDay.Add(one)
		}
	}
	if !at.Before(ask.Window) {
		if mine {
			s.SenderWindow++
		}
		if sender == "" && c.Purpose == ask.Loop {
			s.LoopWindow++
		}
	}
	return nil
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
