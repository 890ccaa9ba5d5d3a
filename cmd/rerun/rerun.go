// Package rerun re-runs a recorded turn in a scratch store: the turn's
// message and its sender's state as of the turn's start are copied into a
// temporary SQLite store, the real driver runs the turn there with the
// provider's recorded replies (or, live, the configured provider), and the
// events it records are compared with the recorded ones, ids and times
// aside. Nothing is written to the live store or sent on any channel.
package rerun

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/prompts"
)

// Source is the live log the turn is read from; it is only read.
type Source interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
	ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error)
}

// Options tune a re-run.
type Options struct {
	// Live calls the configured provider instead of replaying the
	// recorded replies.
	Live bool
	// PromptsDir replaces the prompt files ($OMEGA_DATA_DIR/prompts by
	// default).
	PromptsDir string
	// Model replaces both configured models.
	Model string
	// Timeout bounds the scratch run (default 2m).
	Timeout time.Duration
	Logger  *slog.Logger

	// capabilities are what the recorded turn's process could do.
	capabilities *prompts.Capabilities
	// replay are the turn's recorded decision inputs and effect outcomes.
	replay *app.Replay
}

// Result is one re-run.
type Result struct {
	TurnID    string
	Identical bool
	// Diff is a unified diff of the recorded events (---) and the
	// re-run's (+++), one line per field or line of text.
	Diff []string
	// Changed names what differs: prompt, model, route, reply, markers,
	// access, effects.
	Changed []string
	// Note says what the re-run could not take from the log, if anything.
	Note string
}

// Run re-runs one turn.
func Run(ctx context.Context, src Source, reg *domain.Registry, cfg config.Config, turnID string, o Options) (Result, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	res := Result{TurnID: turnID}
	recorded, err := src.Load(ctx, domain.TurnStream(turnID), 1)
	if err != nil {
		return res, fmt.Errorf("load turn %s: %w", turnID, err)
	}
	if len(recorded) == 0 || recorded[0].Type != "MessageReceived" {
		return res, fmt.Errorf("no turn %s", turnID)
	}
	decoded := make([]domain.Payload, len(recorded))
	for i, e := range recorded {
		if decoded[i], err = reg.Decode(e); err != nil {
			return res, fmt.Errorf("decode %s of turn %s: %w", e.Type, turnID, err)
		}
	}
	msg := decoded[0].(turn.MessageReceived)
	state, err := senderState(ctx, src, recorded, msg)
	if err != nil {
		return res, err
	}
	built := recordedContext(decoded)
	defs, err := definitions(ctx, src, built.ProjectsVersion, recorded[len(recorded)-1])
	if err != nil {
		return res, err
	}
	state = append(state, defs...)
	o.capabilities = recordedCapabilities(built)
	if o.replay, res.Note, err = replayOf(ctx, src, reg, cfg, turnID, decoded, msg); err != nil {
		return res, err
	}

	scratch, err := os.MkdirTemp("", "omega-rerun-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(scratch)
	if err := copyPrompts(cmpOr(o.PromptsDir, filepath.Join(cfg.DataDir, "prompts")), filepath.Join(scratch, "prompts")); err != nil {
		return res, err
	}
	scfg := withInputs(cfg, o.replay.Inputs, res.Note == "")
	scfg.DatabaseURL, scfg.DataDir, scfg.Workspace, scfg.HTTPAddr = "", scratch, filepath.Join(scratch, "workspace"), ""
	if o.Model != "" {
		scfg.Provider.ModelFast, scfg.Provider.ModelComplex = o.Model, o.Model
	}
	produced, err := runScratch(ctx, src, scfg, o, state, recorded, decoded, msg)
	if err != nil {
		return res, err
	}
	if recorded, err = withTexts(ctx, src, reg, recorded); err != nil {
		return res, err
	}
	res.Diff, res.Changed = compare(normalize(recorded), normalize(produced))
	res.Identical = len(res.Diff) == 0
	return res, nil
}

// recordedCapabilities are what the turn's process could do (nil when
// the turn recorded none).
func recordedCapabilities(built turn.ContextBuilt) *prompts.Capabilities {
	if len(built.Capabilities) == 0 {
		return nil
	}
	caps := prompts.ParseCapabilities(built.Capabilities)
	return &caps
}

// replayOf gathers what the turn took from the world: its decision
// inputs and the outcomes of its owner alerts. (A pairing code it offered
// is in the copied pairing stream: the offer is recorded before the
// turn's first step.)
func replayOf(ctx context.Context, src Source, reg *domain.Registry, cfg config.Config, turnID string, decoded []domain.Payload, msg turn.MessageReceived) (*app.Replay, string, error) {
	inputs, note, err := recordedInputs(ctx, src, reg, cfg, decoded, msg)
	if err != nil {
		return nil, "", err
	}
	owner, err := ownerAlerts(ctx, src, reg, turnID)
	if err != nil {
		return nil, "", err
	}
	return &app.Replay{Inputs: inputs, Owner: owner}, note, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// recordedContext is the turn's recorded context (zero when it built none).
func recordedContext(decoded []domain.Payload) turn.ContextBuilt {
	for _, p := range decoded {
		if c, ok := p.(turn.ContextBuilt); ok {
			return c
		}
	}
	return turn.ContextBuilt{}
}
