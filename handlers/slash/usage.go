package slash

import (
	"context"
	"strings"

	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/i18n/budgetmsg"
)

// BudgetStatus says what was spent against which limits (the budget
// guard's Status).
type BudgetStatus interface {
	Status(ctx context.Context, senders ...string) ([]budget.Line, error)
}

// usage answers /usage: what the sender and everything together spent
// this day and this month, what is left of each limit and when it resets.
func (c *Commands) usage(ctx context.Context, call *cmdCall) (string, error) {
	if c.Budget == nil {
		return budgetmsg.Text(call.lang, budgetmsg.NoLimit, "-", "-"), nil
	}
	lines, err := c.Budget.Status(ctx, call.sender)
	if err != nil {
		return "", err
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		label := budgetmsg.Text(call.lang, usageLabel(l))
		spent := budgetmsg.Text(call.lang, budgetmsg.Spent, l.Spent.Tokens, l.Spent.USD, l.Spent.Calls)
		if l.Limit.IsZero() {
			out = append(out, budgetmsg.Text(call.lang, budgetmsg.NoLimit, label, spent))
			continue
		}
		left := l.Left().String()
		if left == "" {
			left = "0"
		}
		out = append(out, budgetmsg.Text(call.lang, budgetmsg.Usage, label, spent, left, l.ResetAt.In(c.Location).Format("2006-01-02 15:04 MST")))
	}
	return strings.Join(out, "\n"), nil
}

// usageLabel names a line: whose spend (the sender's own or everything
// together) over which period.
func usageLabel(l budget.Line) budgetmsg.Key {
	own, month := l.Scope != "", l.Period == budget.Month
	switch {
	case own && month:
		return budgetmsg.YouThisMonth
	case own:
		return budgetmsg.YouToday
	case month:
		return budgetmsg.AllThisMonth
	}
	return budgetmsg.AllToday
}
