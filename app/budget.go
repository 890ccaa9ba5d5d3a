package app

import (
	"time"

	"github.com/omega-gateway/omega/handlers/budget"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// guarded puts the spending guard in front of the provider, so that every
// call (turns, plan steps, classifications, check-ins, summaries, facts,
// self-heal follow-ups, action tasks) is decided on first. A re-run is
// not guarded: it replays what was decided then.
func (r *Runtime) guarded(p pipeline.Provider, loc *time.Location, opts RuntimeOptions) (pipeline.Provider, error) {
	if opts.Replay != nil {
		return p, nil
	}
	cfg := r.Config
	limits, err := cfg.BudgetLimits()
	if err != nil {
		return nil, err
	}
	if r.Budget, err = budget.New(budget.Config{
		Limits: limits, Location: loc, RunawayCalls: cfg.BudgetRunawayCalls, RunawayWindow: cfg.BudgetRunawayWindow,
	}, r.Store, r.Registry, r.Calls, owner{r}, r.Logger); err != nil {
		return nil, err
	}
	return budget.Wrap(p, r.Budget), nil
}
