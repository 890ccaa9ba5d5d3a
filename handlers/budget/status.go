package budget

import (
	"context"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/providers"
)

// Status says, for everything together and for the given senders (every
// sender with limits when none is given), what was spent this day and
// this month against which limits, as a decision would count it now.
func (g *Guard) Status(ctx context.Context, senders ...string) ([]budget.Line, error) {
	if len(senders) == 0 {
		var limits budget.SenderLimits
		if _, err := foldLimits(ctx, g, &limits); err != nil {
			return nil, err
		}
		for k := range limits.Of {
			senders = append(senders, k)
		}
		slices.Sort(senders)
	}
	now := g.now()
	all, err := g.spent(ctx, providers.Call{}, now)
	if err != nil {
		return nil, err
	}
	out := g.lines("", g.cfg.Limits, all.AllDay, all.AllMonth, now)
	for _, who := range senders {
		scopes, err := g.scopes(ctx, who)
		if err != nil {
			return nil, err
		}
		var limits budget.Limits
		for _, s := range scopes {
			if s.Name == who {
				limits = s.Limits
			}
		}
		s, err := g.spent(ctx, providers.Call{Sender: who}, now)
		if err != nil {
			return nil, err
		}
		out = append(out, g.lines(who, limits, s.SenderDay, s.SenderMonth, now)...)
	}
	return out, nil
}

func (g *Guard) lines(scope string, l budget.Limits, day, month budget.Spend, now time.Time) []budget.Line {
	return []budget.Line{
		{Scope: scope, Period: budget.Day, Limit: l.Daily, Spent: day, ResetAt: budget.PeriodEnd(budget.Day, now, g.cfg.Location)},
		{Scope: scope, Period: budget.Month, Limit: l.Monthly, Spent: month, ResetAt: budget.PeriodEnd(budget.Month, now, g.cfg.Location)},
	}
}
