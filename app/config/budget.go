package config

import (
	"fmt"

	"github.com/omega-gateway/omega/domain/budget"
)

// BudgetLimits are the limits for every provider call together.
func (c Config) BudgetLimits() (budget.Limits, error) {
	daily, err := budget.ParseAmount(c.BudgetDaily)
	if err != nil {
		return budget.Limits{}, fmt.Errorf("OMEGA_BUDGET_DAILY: %w", err)
	}
	monthly, err := budget.ParseAmount(c.BudgetMonthly)
	if err != nil {
		return budget.Limits{}, fmt.Errorf("OMEGA_BUDGET_MONTHLY: %w", err)
	}
	return budget.Limits{Daily: daily, Monthly: monthly}, nil
}

// validateBudget checks the limits and the runaway guard's bounds.
func (c Config) validateBudget(p *problems) {
	if _, err := c.BudgetLimits(); err != nil {
		p.bad("%s", err)
	}
	if c.BudgetRunawayCalls < 0 {
		p.bad("OMEGA_BUDGET_RUNAWAY_CALLS must not be negative (got %d)", c.BudgetRunawayCalls)
	}
	if c.BudgetRunawayCalls > 0 && c.BudgetRunawayWindow <= 0 {
		p.bad("OMEGA_BUDGET_RUNAWAY_WINDOW must be positive (got %s)", c.BudgetRunawayWindow)
	}
}
