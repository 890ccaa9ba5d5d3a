// Package pipeline drives a turn from the message to the reply: it folds
// the turn's stream, decides the single next step (access, commands,
// context, plan, provider call, markers, send), performs it and records
// the outcome, so a turn interrupted anywhere resumes from its last event.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/pipeline/coalesce"
	"github.com/omega-gateway/omega/handlers/pipeline/gather"
	"github.com/omega-gateway/omega/handlers/pipeline/images"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/prompts"
)

// Driver runs turns: it folds a turn's stream, decides the single next
// step, performs it and records the outcome, until the turn completes.
// Because every outcome is recorded before the next step starts, a turn
// interrupted at any point resumes from its last event.
type Driver struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Senders  Profiles
	Read     *projections.Queries
	Channels ChannelSet
	Provider Provider
	Prompts  *prompts.Set
	Auth     Auth
	Pairing  PairingGate // nil: unknown senders are denied
	Commands CommandHook
	Replies  ReplyHook
	Skills   *skills.Library // nil: no skills
	// Projects imports project definitions and reads them from the log;
	// nil: no projects.
	Projects ProjectCatalog
	// Recall searches older conversations for a message that asks to
	// recall (nil: no full-text recall).
	Recall gather.Recaller
	Config DriverConfig
	Logger *slog.Logger
	Now    func() time.Time

	// Images finds the workspace images a turn made (nil: the workspace
	// on disk, see images.go).
	Images WorkspaceImages
	// Live shows streamed replies to the turn's watchers (nil: none).
	Live LiveReplies
	// PromptTexts records contexts by reference (nil: in full).
	PromptTexts *promptstore.Store
	// Replied holds the turns whose final reply went out before their
	// completion was recorded (nil: NewDriver makes it); the scheduler
	// reads it.
	Replied *RepliedTurns

	// The driver's parts, built once from the fields above by NewDriver.
	gatherer  *gather.Gatherer
	coalescer *coalesce.Coalescer
	photos    *images.Sender
}

// NewDriver checks a driver's collaborators: the store, registry, read
// model, channels, provider, prompts and logger are required; Commands
// and Replies may be nil (no command answers, replies sent as written).
func NewDriver(d Driver) (*Driver, error) {
	switch {
	case d.Store == nil, d.Registry == nil, d.Read == nil, d.Channels == nil, d.Provider == nil, d.Prompts == nil, d.Logger == nil:
		return nil, errors.New("pipeline: driver needs a store, registry, read model, channels, provider, prompts and logger")
	case d.Senders == nil:
		return nil, errors.New("pipeline: driver needs the sender profiles")
	}
	if d.Replied == nil {
		d.Replied = NewRepliedTurns()
	}
	if err := d.buildParts(); err != nil {
		return nil, err
	}
	return &d, nil
}

func (d *Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Run drives a turn to completion.
func (d *Driver) Run(ctx context.Context, turnID string) error {
	st := &turnState{Turn: turn.Turn{ID: turnID}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil {
		return fmt.Errorf("turn %s has no message", turnID)
	}
	if err := d.resolveContext(ctx, st); err != nil {
		return err
	}
	log := d.Logger.With("turn", turnID, "channel", st.Received.Channel, "sender", st.Received.SenderID)
	var profile sender.SenderProfile
	stale := true
	for {
		// Only some steps write to the sender's stream; reload after those.
		if stale {
			if profile, err = d.loadProfile(ctx, st); err != nil {
				return err
			}
		}
		env := turn.TurnEnv{
			// A crash between recording Welcomed and sending the welcome
			// must still send it.
			SenderWelcomed: profile.Welcomed && (profile.WelcomedTurn != turnID || st.WelcomeSent),
			IsCommand:      d.isCommand(ctx, &st.Turn),
			// A scheduled action already says what to do: no plan routing.
			Classify: d.Config.Classify && st.Received.Task == nil,
		}
		step := st.Next(env)
		if step == turn.StepNone {
			return d.flush(ctx, st)
		}
		log.Debug("turn step", "step", step)
		if err := d.perform(ctx, st, step, profile, log); err != nil {
			return fmt.Errorf("turn %s: %s: %w", turnID, step, err)
		}
		stale = d.writesSender(step) || st.senderWritten
		st.senderWritten = false
	}
}

// flushBefore reports whether what was decided before a step must be on
// record before the step acts. It must when the step's effect depends on
// those decisions being final: markers (the raw reply they come from), a
// welcome or command (they write elsewhere), plan steps. A provider call
// records its intent (ProviderCalled) together with everything pending
// right before it calls. A reply need not be: if the process dies after
// sending it, the turn resumes before the send and sends again either way.
// A classification whose outcome is lost is simply asked again.
func (d *Driver) flushBefore(_ *turnState, step turn.Step) bool {
	switch step {
	case turn.StepWelcome, turn.StepCommand, turn.StepPlanStep, turn.StepPlanProgress:
		return true
	case turn.StepProcessReply:
		return d.Replies != nil
	}
	return false
}

// writesSender reports whether a step may change the sender's stream, so
// that the profile must be read again after it. The provider call and the
// reply's markers say so themselves (turnState.senderWritten): most turns
// start no session and carry no marker, and then the profile read at the
// start of the turn stays current.
func (d *Driver) writesSender(step turn.Step) bool {
	switch step {
	case turn.StepWelcome, turn.StepCommand, turn.StepPlanStep, turn.StepPlanProgress:
		return true
	}
	return false
}

// stepFunc performs one step of a turn.
type stepFunc func(d *Driver, ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error

// steps maps each step Turn.Next can decide to what performs it.
var steps = map[turn.Step]stepFunc{
	turn.StepAuthorize: func(d *Driver, ctx context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
		return d.authorize(ctx, st, log)
	},
	turn.StepWelcome:      (*Driver).welcome,
	turn.StepCommand:      (*Driver).command,
	turn.StepBuildContext: (*Driver).addContext,
	turn.StepClassify: func(d *Driver, ctx context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
		return d.classify(ctx, st, log)
	},
	turn.StepPlanStep:     (*Driver).planStep,
	turn.StepPlanProgress: (*Driver).planProgress,
	turn.StepPlanSummary: func(d *Driver, _ context.Context, st *turnState, profile sender.SenderProfile, _ *slog.Logger) error {
		d.planSummary(st, profile)
		return nil
	},
	turn.StepCallProvider: (*Driver).callProvider,
	turn.StepProcessReply: func(d *Driver, ctx context.Context, st *turnState, profile sender.SenderProfile, _ *slog.Logger) error {
		return d.processReply(ctx, st, profile)
	},
	turn.StepSendReply: (*Driver).sendReply,
	turn.StepCleanup: func(d *Driver, _ context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
		st.add(turn.AttachmentsRemoved{Paths: d.removeAttachments(st, log)})
		return nil
	},
	turn.StepComplete: (*Driver).complete,

	turn.StepSendImages: (*Driver).sendImages,
}

func (d *Driver) perform(ctx context.Context, st *turnState, step turn.Step, profile sender.SenderProfile, log *slog.Logger) error {
	if d.flushBefore(st, step) {
		if err := d.flush(ctx, st); err != nil {
			return err
		}
	}
	if do, ok := steps[step]; ok {
		return do(d, ctx, st, profile, log)
	}
	return nil
}
