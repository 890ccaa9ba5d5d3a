package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/omega-gateway/omega/app/nodeid"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/build"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pairing"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/projects"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/handlers/slash"
	"github.com/omega-gateway/omega/handlers/summarizer"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/prompts"
)

// startBuses claims this process's node identity and builds the router,
// the command bus and the due-work clock on the router.
func (r *Runtime) startBuses(opts RuntimeOptions) error {
	var err error
	if r.node, err = nodeid.Claim(r.Config.DataDir); err != nil {
		return err
	}
	r.Logger.Info("node identity", "owner", r.node.ID)
	// PostgreSQL announces commands with LISTEN/NOTIFY; SQLite's command
	// transport is in-process and needs no announcement.
	announcer, _ := r.backend.(messaging.Announcer)
	r.Buses, err = messaging.New(messaging.Options{Backend: r.Store.Backend(), DB: r.backend.DB(), Log: r.Store, Registry: r.Registry,
		Logger: r.Logger, Announcer: announcer, Metrics: opts.Metrics})
	if err != nil {
		return err
	}
	r.Clock, err = duework.New(r.Buses.Router, r.Logger, duework.Options{})
	return err
}

// prepareProjects imports the project definitions into the log (unless
// frozen) and returns the catalog turns read them from, the prompts as
// written, and the capabilities of this process as they stand at start.
func (r *Runtime) prepareProjects(ctx context.Context, opts RuntimeOptions, raw *prompts.Set, sandbox string) (*projects.Catalog, *prompts.Set, prompts.Capabilities, error) {
	dir := filepath.Join(r.Config.DataDir, "projects")
	if opts.FrozenProjects {
		dir = ""
	}
	catalog, err := projects.New(r.Store, r.Registry, dir, r.Logger)
	if err != nil {
		return nil, nil, prompts.Capabilities{}, err
	}
	known, err := catalog.Sync(ctx)
	if err != nil {
		return nil, nil, prompts.Capabilities{}, err
	}
	caps := r.capabilities(opts, sandbox)
	caps.Projects = len(known.Defs) > 0
	caps.Skills = r.skillsPresent(ctx, opts.Capabilities)
	r.Logger.Info("capabilities the system prompt describes", "capabilities", caps.Names())
	return catalog, raw, caps, nil
}

// startCommandHandlers builds the summarizer and subscribes it and the
// sender commands to the command bus.
func (r *Runtime) startCommandHandlers(ctx context.Context, provider summarizer.Provider, leases *lease.Leases, ps *prompts.Set, workspace string) error {
	cfg := r.Config
	var err error
	r.Summarizer, err = summarizer.New(summarizer.Deps{
		Store: r.Store, Registry: r.Registry, Read: r.Queries, Senders: r.Senders, Provider: provider,
		Leases: leases, Prompts: ps, Logger: r.Logger,
	}, summarizer.Config{Idle: cfg.ConversationIdle, LeaseTTL: cfg.LeaseTTL, Model: cfg.Provider.ModelFast, WorkDir: workspace})
	if err != nil {
		return err
	}
	hs := append(r.Senders.CommandHandlers(), r.Effects.CommandHandlers()...)
	hs = append(hs, r.Access.CommandHandlers()...)
	hs = append(hs, r.budgetCommands()...)
	return r.Buses.AddCommandHandlers(ctx, append(hs, r.Summarizer.CommandHandler())...)
}

// startScheduling builds the leases, the scheduler and the gateway that
// kicks it.
func (r *Runtime) startScheduling(names []string, workspace string) (*lease.Leases, error) {
	leases, err := lease.New(r.Store, r.node.ID, r.Config.LeaseTTL)
	if err != nil {
		return nil, err
	}
	// Every turn runs as a RunTurn message on the router, behind its
	// middleware (poison queue, retry, recoverer, metrics).
	turns, err := r.Buses.AddTurnHandler(r.Driver.Run, r.Driver.Transient)
	if err != nil {
		return nil, err
	}
	if r.Scheduler, err = scheduling.NewScheduler(scheduling.SchedulerConfig{
		Driver: r.Driver, Turns: turns, Read: r.Driver.Read, Channels: names, Logger: r.Logger, Leases: leases, Applied: r.Engine.Applied,
		AppliedThrough: func() (int64, bool) { return r.Engine.AppliedThrough(projections.Turns{}.Name()) },
		Await:          r.Engine.Await,
		CoalesceWindow: r.Config.CoalesceWindow,
	}); err != nil {
		return nil, err
	}
	if r.Gateway, err = intake.NewGateway(r.Store, filepath.Join(workspace, "inbox"), r.Scheduler.Kick,
		intake.WithSecrets(r.Config.Redactor(), r.Logger)); err != nil {
		return nil, err
	}
	return leases, nil
}

// hooks returns the command and marker hooks the options give, else the
// default ones (with WhatsApp pairing when the options have a source).
func (r *Runtime) hooks(opts RuntimeOptions, loc *time.Location, catalog *projects.Catalog, status slash.StatusInfo) (pipeline.CommandHook, pipeline.ReplyHook, error) {
	var whatsApp slash.WhatsAppPairing
	if opts.Pairing != nil {
		var err error
		if r.Pairing, err = pairing.NewWhatsAppQR(pairing.Deps{Source: opts.Pairing, Channels: r, Store: r.Store,
			Senders: r.Senders, Logger: r.Logger}); err != nil {
			return nil, nil, err
		}
		whatsApp = r.Pairing
	}
	replies := opts.Replies
	if replies == nil {
		var err error
		if replies, err = apply.New(apply.Markers{Recorder: r.Effects, Profiles: r.Senders, Location: loc, WhatsApp: whatsApp,
			Owner: r.owner(opts), Followers: r.markerFollowers(), Logger: r.Logger}); err != nil {
			return nil, nil, err
		}
	}
	commands := opts.Commands
	if commands == nil {
		var err error
		commands, err = slash.New(slash.Commands{
			Recorder: r.Effects, WhatsApp: whatsApp, Access: r.Access, BotName: opts.BotName, Location: loc, Started: time.Now(),
			DataDir: r.Config.DataDir, Status: status, Skills: r.Skills, Projects: catalog,
			HeartbeatNext: r.heartbeatNext, HeartbeatMinutes: int(r.Config.HeartbeatInterval / time.Minute), Recall: r.Recall,
			Builds: build.Service{Store: r.Store, Registry: r.Registry, TopologiesDir: topologiesDir(r.Config.DataDir, opts), Logger: r.Logger},
			Budget: r.budgetStatus(),
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return commands, replies, nil
}

// markerFollowers carry on what a reply's markers begin: a SELF_HEAL
// marker puts the self-heal effort on the clock, a HEARTBEAT_INTERVAL
// marker the heartbeat's next check-in.
func (r *Runtime) markerFollowers() []apply.Follower {
	fs := []apply.Follower{selfheal.Kicks(r.Clock)}
	if r.Config.HeartbeatEnabled {
		fs = append(fs, heartbeat.Restarts(r.Clock))
	}
	return fs
}
