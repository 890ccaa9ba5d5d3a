package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/pipeline/gather"
)

// Replay is what a re-run takes from the log instead of from this
// process's configuration and the world: the decision inputs in force
// when the turn ran, and the recorded outcomes of its effects.
type Replay struct {
	Inputs system.DecisionInputs
	// Owner answers owner alerts with their recorded outcomes.
	Owner apply.Owner
	// Now is the recorded clock: pairing codes' lifetimes and the
	// driver's idle, due-time and pairing decisions.
	Now func() time.Time
	// Recall answers the turn's full-text recall with the passages it
	// recorded (nil: the index).
	Recall gather.Recaller
	// ProviderProblem is why the turn's provider could not work at all
	// when it ran (nil: it could): the driver answers with the explanation
	// again instead of calling it.
	ProviderProblem error
}

// configuredInputs are the decision inputs of this process: the
// allowlists it runs with and the configuration's pairing policy, owner
// target and time zone.
func (a *App) configuredInputs(allowed map[string][]string) (system.DecisionInputs, error) {
	ch, chat, err := a.Config.HeartbeatDestination()
	if err != nil {
		return system.DecisionInputs{}, err
	}
	return system.DecisionInputs{
		Allowed: allowed, Pairing: a.Config.PairingEnabled,
		PairingCodeTTL: a.Config.PairingCodeTTL, PairingMaxCodes: a.Config.PairingMaxCodes,
		OwnerChannel: ch, OwnerChat: chat, Timezone: cmp.Or(a.Config.Timezone, "Local"),
		Classify: a.Config.Classify, ModelFast: a.Config.Provider.ModelFast, ModelComplex: a.Config.Provider.ModelComplex,
		HistoryLimit: a.Config.HistoryLimit, ConversationIdle: a.Config.ConversationIdle,
	}.Normalized(), nil
}

// decisionInputs are the replayed inputs, else the configured ones; they
// are recorded (once per distinct content) so that every decision can
// name them.
func (a *App) decisionInputs(ctx context.Context, opts RuntimeOptions, allowed map[string][]string) (system.DecisionInputs, error) {
	in, err := a.configuredInputs(allowed)
	if opts.Replay != nil {
		in, err = opts.Replay.Inputs.Normalized(), nil
	}
	if err != nil {
		return in, err
	}
	return in, a.recordInputs(ctx, in)
}

// recordInputs stores the inputs on their content-addressed stream unless
// they are there: two processes with the same configuration both succeed,
// one of them by finding it there.
func (a *App) recordInputs(ctx context.Context, in system.DecisionInputs) error {
	stream := system.DecisionInputsStream(in.Hash())
	v, err := a.Store.StreamVersion(ctx, stream)
	if err != nil || v > 0 {
		return err
	}
	ev, err := domain.NewEventFrom(in, domain.Metadata{})
	if err != nil {
		return err
	}
	if _, err := a.Store.Append(ctx, stream, eventstore.NoStream, ev); err != nil && !errors.Is(err, eventstore.ErrConcurrency) {
		return fmt.Errorf("record the decision inputs: %w", err)
	}
	return nil
}

// location is the inputs' time zone.
func location(in system.DecisionInputs) (*time.Location, error) {
	loc, err := time.LoadLocation(in.Timezone)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", in.Timezone, err)
	}
	return loc, nil
}
