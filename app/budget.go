package app

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"

	"github.com/omega-gateway/omega/handlers/budget"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/slash"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/providercalls"
)

// NewBudgetGuard is the spending guard with the configured limits, days
// and months starting in loc (nil: OMEGA_TIMEZONE); owner may be nil
// (alerts are then only logged and recorded).
func (a *App) NewBudgetGuard(loc *time.Location, owner budget.Owner) (*budget.Guard, error) {
	cfg := a.Config
	limits, err := cfg.BudgetLimits()
	if err != nil {
		return nil, err
	}
	if loc == nil {
		if loc, err = cfg.Location(); err != nil {
			return nil, err
		}
	}
	return budget.New(budget.Config{
		Limits: limits, Location: loc, RunawayCalls: cfg.BudgetRunawayCalls, RunawayWindow: cfg.BudgetRunawayWindow,
	}, a.Store, a.Registry, a.Calls, owner, a.Logger)
}

// guardedProvider is the provider (App.provider) behind the guard.
func (r *Runtime) guardedProvider(ctx context.Context, loc *time.Location, opts RuntimeOptions) (pipeline.Provider, error, error) {
	p, problem, err := r.provider(ctx, opts.Provider)
	if err != nil {
		return nil, nil, err
	}
	if opts.Replay != nil {
		problem = opts.Replay.ProviderProblem
	}
	p, err = r.guarded(p, loc, opts)
	return p, problem, err
}

// guarded puts the spending guard in front of the provider, so that every
// call (turns, plan steps, classifications, check-ins, summaries, facts,
// self-heal follow-ups, action tasks) is decided on first. A re-run is
// not guarded: it replays what was decided then.
func (r *Runtime) guarded(p pipeline.Provider, loc *time.Location, opts RuntimeOptions) (pipeline.Provider, error) {
	if opts.Replay != nil {
		return p, nil
	}
	var err error
	if r.Budget, err = r.NewBudgetGuard(loc, owner{r}); err != nil {
		return nil, err
	}
	return budget.Wrap(p, r.Budget), nil
}

// budgetStatus answers /usage; nil when no guard runs (a re-run).
func (r *Runtime) budgetStatus() slash.BudgetStatus {
	if r.Budget == nil {
		return nil
	}
	return r.Budget
}

// budgetCommands handle `omega budget set`.
func (a *App) budgetCommands() []cqrs.CommandHandler {
	c, err := budget.NewCommands(a.Store, a.Registry)
	if err != nil {
		return nil // never: the app always has both
	}
	return c.CommandHandlers()
}

// openAuditQueries opens the queries of what the agent did: the audit of
// turns and every provider call.
func (a *App) openAuditQueries() (err error) {
	if a.Audit, err = auditlog.New(a.backend.ReadDB()); err != nil {
		return err
	}
	a.Calls, err = providercalls.NewQueries(a.backend.ReadDB())
	return err
}
