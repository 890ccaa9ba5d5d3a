package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/access"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pairing"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/projects"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/handlers/slash"
	"github.com/omega-gateway/omega/handlers/summarizer"
	"github.com/omega-gateway/omega/handlers/taskwork"
	"github.com/omega-gateway/omega/internal/live"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/registry"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Runtime is a running gateway: channels feed the gateway, the scheduler
// drives turns, projections and buses follow the log.
type Runtime struct {
	*App
	Gateway   *intake.Gateway
	Driver    *pipeline.Driver
	Scheduler *scheduling.Scheduler
	Buses     *messaging.Buses
	// Summarizer closes idle conversations, and open ones at shutdown.
	Summarizer *summarizer.Summarizer
	// Pairing links WhatsApp from another channel; nil when WhatsApp is
	// not enabled.
	Pairing *pairing.WhatsAppQR
	// Clock fires due work (tasks); Tasks keeps it told of task changes.
	Clock *duework.Clock
	Tasks *taskwork.Follower
	// Heartbeat runs the check-ins; nil when OMEGA_HEARTBEAT_ENABLED=false.
	Heartbeat *heartbeat.Runner
	// SelfHeal follows up self-healing efforts.
	SelfHeal *selfheal.Runner
	// Skills imports $OMEGA_DATA_DIR/skills into the log and reads them back.
	Skills *skills.Library
	// Access is sender pairing and identity links.
	Access *access.Service
	// Live fans streamed replies out to the turns' watchers.
	Live     *live.Hub
	channels map[string]channels.Channel
	health   *channelWatch
	// summarizeOnShutdown: see RuntimeOptions.SummarizeOnShutdown.
	summarizeOnShutdown bool

	// inputs are the decision inputs this process runs with.
	inputs   system.DecisionInputs
	node     *nodeIdentity
	mu       sync.Mutex
	received []string // turns this process received and not yet seen completed, for WaitIdle
}

// RuntimeOptions chooses what a process hosts.
type RuntimeOptions struct {
	Channels []channels.Channel
	// Provider replaces the configured one (tests, benchmarks).
	Provider pipeline.Provider
	// Auth replaces the allowlists built from the configuration.
	Auth *pipeline.Auth
	// Commands and Replies replace the default command and marker hooks.
	Commands pipeline.CommandHook
	Replies  pipeline.ReplyHook
	// Pairing is the WhatsApp channel's pairing source, for /whatsapp and
	// WHATSAPP_QR (the codes go as images to the chat that asked); nil
	// means WhatsApp is not enabled.
	Pairing pairing.Source
	// BotName returns the bot's @name, so that "/cmd@name" is recognised.
	BotName func() string
	// Sandbox describes the provider's sandbox mode for /status.
	Sandbox string
	// SummarizeOnShutdown summarizes the open conversations when Run
	// ends (omega serve); a terminal chat leaves at once instead.
	SummarizeOnShutdown bool
	// Metrics, when set, receives the router's handler metrics.
	Metrics prometheus.Registerer
	// Capabilities replaces what the system prompt says this process can
	// do (a re-run says what the recorded turn's process could).
	Capabilities *prompts.Capabilities
	// FrozenProjects reads project definitions from the log only, never
	// importing the projects folder (a re-run's scratch has none).
	FrozenProjects bool
	// Replay, for a re-run, replaces the decision inputs (Auth among
	// them) and the outcomes of effects with the recorded ones.
	Replay *Replay
	// Images replaces the driver's look at the workspace for the images a
	// turn made (a re-run answers with the recorded ones); nil: the disk.
	Images pipeline.WorkspaceImages
	// SummaryProvider replaces the provider the summarizer asks (a re-run
	// must not summarize); nil: the turns' provider.
	SummaryProvider summarizer.Provider
}

// clock is the recorded clock a re-run's turns decide on; nil: the real one.
func (o RuntimeOptions) clock() func() time.Time {
	if o.Replay == nil {
		return nil
	}
	return o.Replay.Now
}

// summaryProvider is the provider the summarizer asks.
func (o RuntimeOptions) summaryProvider(turns pipeline.Provider) summarizer.Provider {
	if o.SummaryProvider != nil {
		return o.SummaryProvider
	}
	return turns
}

// UnhealthyChannels lists the channels that cannot receive now
// ("telegram: down"), for /readyz.
func (r *Runtime) UnhealthyChannels() []string { return r.health.Unhealthy() }

// Channel implements pipeline.ChannelSet.
func (r *Runtime) Channel(name string) (channels.Channel, bool) {
	ch, ok := r.channels[name]
	return ch, ok
}

// sandboxMode is the configured sandbox mode, workspace when it does not
// parse (config.Validate has reported it).
func sandboxMode(configured string) string {
	if m, err := providers.ParseSandbox(configured); err == nil {
		return string(m)
	}
	return string(providers.SandboxWorkspace)
}

// provider returns the given provider, else the configured one with the
// reason it cannot work (nil when it can): a provider that cannot work
// does not stop omega, turns are answered with an explanation.
func (a *App) provider(ctx context.Context, given pipeline.Provider) (pipeline.Provider, error, error) {
	if given != nil {
		return given, nil, nil
	}
	p, err := registry.New(a.Config.Provider, a.Logger)
	if err != nil {
		return nil, nil, err
	}
	problem := p.Check(ctx)
	if problem != nil {
		a.Logger.Error("the AI provider cannot work; messages will be answered with an explanation until this is fixed",
			"provider", a.Config.Provider.Provider, "problem", problem)
	}
	return p, problem, nil
}

// prepare loads the prompts, records the decision inputs and creates the
// workspace with its inbox.
func (a *App) prepare(ctx context.Context, opts RuntimeOptions) (*prompts.Set, system.DecisionInputs, string, error) {
	ps, err := prompts.Load(a.Config.DataDir)
	if err != nil {
		return nil, system.DecisionInputs{}, "", err
	}
	inputs, err := a.decisionInputs(ctx, opts, authOf(opts).Allowed)
	if err != nil {
		return nil, inputs, "", err
	}
	workspace := a.Config.WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(workspace, "inbox"), 0o700); err != nil {
		return nil, inputs, "", fmt.Errorf("create workspace %s: %w", workspace, err)
	}
	return ps, inputs, workspace, nil
}

// NewRuntime assembles the pipeline. A provider that cannot work does not
// stop it: turns are answered with an explanation and the problem is
// logged with what to install or set.
func (a *App) NewRuntime(ctx context.Context, opts RuntimeOptions) (_ *Runtime, err error) {
	cfg := a.Config
	ps, inputs, workspace, err := a.prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	loc, err := location(inputs)
	if err != nil {
		return nil, err
	}
	r := &Runtime{App: a, channels: map[string]channels.Channel{}, summarizeOnShutdown: opts.SummarizeOnShutdown, inputs: inputs,
		Live: live.NewHub(0)}
	names := r.addChannels(opts.Channels)
	r.health = newChannelWatch(a.Store, owner{r}, cfg.ChannelDownAlert, a.Logger)
	r.health.attach(r.channels)

	if err := r.startSkills(ctx); err != nil {
		return nil, err
	}
	provider, problem, err := a.provider(ctx, opts.Provider)
	if err != nil {
		return nil, err
	}
	auth := pipeline.Auth{Allowed: inputs.Allowed}
	sandbox := sandboxMode(cfg.Provider.Sandbox)
	read := a.Queries
	if r.Access, err = a.newAccess(inputs, r, loc, opts.Replay); err != nil {
		return nil, err
	}
	catalog, raw, caps, err := r.prepareProjects(ctx, opts, ps, sandbox)
	if err != nil {
		return nil, err
	}
	ps = raw.For(caps) // promise only what runs
	defer func() {
		if err != nil && r.node != nil {
			_ = r.node.Release()
		}
	}()
	// The buses and the due-work clock come before the hooks: the marker
	// applier hands what replies did to followers that set the clock.
	if err := r.startBuses(opts); err != nil {
		return nil, err
	}
	commands, replies, err := r.hooks(opts, loc, catalog, slash.StatusInfo{Provider: provider.Name(), Model: cfg.Provider.ModelFast,
		Channels: names, Store: string(a.Store.Backend()), Sandbox: cmp.Or(opts.Sandbox, sandbox)})
	if err != nil {
		return nil, err
	}
	if r.Driver, err = pipeline.NewDriver(pipeline.Driver{
		Store: a.Store, Registry: a.Registry,
		Senders:  a.Senders,
		Read:     read,
		Channels: r, Provider: provider, Prompts: raw, Auth: auth, Pairing: r.pairingGate(),
		Commands: commands, Replies: replies, Skills: r.Skills, Projects: catalog, PromptTexts: a.PromptTexts,
		Config: pipeline.DriverConfig{
			ModelFast: cfg.Provider.ModelFast, ModelComplex: cfg.Provider.ModelComplex, Classify: cfg.Classify,
			Capabilities: &caps, Workspace: workspace, ConversationIdle: cfg.ConversationIdle,
			Location: loc, HistoryLimit: cfg.HistoryLimit, StatusFirst: cfg.StatusFirst, StatusEvery: cfg.StatusEvery,
			TypingEvery: 5 * time.Second, ProviderProblem: problem, Streaming: cfg.StreamReplies(),
			Sandbox: sandbox, Redactor: cfg.Redactor(), Inputs: inputs.Hash(),
		},
		Logger: a.Logger, Now: opts.clock(), Images: opts.Images, Live: r.Live,
	}); err != nil {
		return nil, err
	}
	leases, err := r.startScheduling(names, workspace)
	if err != nil {
		return nil, err
	}
	if err := r.startCommandHandlers(ctx, opts.summaryProvider(provider), leases, ps, workspace); err != nil {
		return nil, err
	}
	if err := r.startBackground(heartbeatDeps{provider: provider, prompts: ps, replies: replies, read: read, loc: loc, sandbox: sandbox, workspace: workspace, projects: catalog, noTools: caps.NoTools}); err != nil {
		return nil, err
	}
	return r, nil
}

// addChannels registers the channels and returns their names.
func (r *Runtime) addChannels(chs []channels.Channel) []string {
	names := make([]string, 0, len(chs))
	for _, ch := range chs {
		r.channels[ch.Name()] = ch
		names = append(names, ch.Name())
	}
	return names
}

// authOf is the allowlists the options give, else none.
func authOf(opts RuntimeOptions) pipeline.Auth {
	if opts.Auth != nil {
		return *opts.Auth
	}
	return pipeline.Auth{Allowed: map[string][]string{}}
}

// startBuses claims this process's node identity and builds the router,
// the command bus and the due-work clock on the router.
func (r *Runtime) startBuses(opts RuntimeOptions) error {
	var err error
	if r.node, err = claimNodeIdentity(r.Config.DataDir); err != nil {
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
func (r *Runtime) startCommandHandlers(ctx context.Context, provider summarizer.Provider, leases *scheduling.Leases, ps *prompts.Set, workspace string) error {
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
	return r.Buses.AddCommandHandlers(ctx, append(hs, r.Summarizer.CommandHandler())...)
}

// startBackground starts the loops that act without a message: the
// clock, self-healing and the heartbeat.
func (r *Runtime) startBackground(d heartbeatDeps) error {
	if err := r.startClock(d.loc); err != nil {
		return err
	}
	if err := r.startSelfHeal(d.provider, d.replies, d.workspace, d.noTools); err != nil {
		return err
	}
	return r.startHeartbeat(d)
}

// startScheduling builds the leases, the scheduler and the gateway that
// kicks it.
func (r *Runtime) startScheduling(names []string, workspace string) (*scheduling.Leases, error) {
	leases, err := scheduling.NewLeases(r.Store, r.node.ID, r.Config.LeaseTTL)
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
			HeartbeatNext: r.heartbeatNext, HeartbeatMinutes: int(r.Config.HeartbeatInterval / time.Minute),
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

// startClock registers the task firer on the due-work clock.
func (r *Runtime) startClock(loc *time.Location) error {
	firer, err := taskwork.NewFirer(taskwork.Config{
		Store: r.Store, Registry: r.Registry, Channels: r, Profiles: r.Senders,
		Clock: r.Clock, Kick: r.Scheduler.Kick, Location: loc, Logger: r.Logger, LateAfter: r.Config.TaskLateAfter,
		Node: r.node.ID,
	})
	if err != nil {
		return err
	}
	if err := r.Clock.Handle(taskwork.Kind, firer.Handle); err != nil {
		return err
	}
	r.Tasks, err = taskwork.NewFollower(r.Store, r.Registry, r.Queries, r.Clock, r.Logger)
	return err
}

// heartbeatDeps are what the heartbeat shares with the turn pipeline.
type heartbeatDeps struct {
	provider  pipeline.Provider
	prompts   *prompts.Set
	replies   pipeline.ReplyHook
	read      heartbeat.Summaries
	loc       *time.Location
	sandbox   string
	workspace string
	projects  *projects.Catalog
	noTools   bool // the provider only writes text
}

// startHeartbeat registers the heartbeat's cycles on the due-work clock
// (when enabled); Run puts the global scope on it.
func (r *Runtime) startHeartbeat(d heartbeatDeps) error {
	cfg := r.Config
	if !cfg.HeartbeatEnabled {
		return nil
	}
	active, err := heartbeatdom.ParseActiveHours(cfg.HeartbeatActiveHours)
	if err != nil {
		return err
	}
	ch, chat, err := cfg.HeartbeatDestination()
	if err != nil {
		return err
	}
	enricher, err := heartbeat.NewEnricher(r.Store, r.Registry, r.Senders, d.read, d.prompts, d.sandbox, filepath.Join(cfg.DataDir, "projects"))
	if err != nil {
		return err
	}
	enricher.Projects = d.projects
	r.Heartbeat, err = heartbeat.New(heartbeat.Config{
		Store: r.Store, Registry: r.Registry, Provider: d.provider, Markers: apply.CheckIn(d.replies), Channels: r,
		Clock: r.Clock, Context: enricher, Prompts: d.prompts, Logger: r.Logger,
		Target: heartbeat.Target{Channel: ch, Chat: chat}, Interval: cfg.HeartbeatInterval, Active: active, Location: d.loc,
		ModelFast: cfg.Provider.ModelFast, ModelComplex: cmp.Or(cfg.Provider.ModelComplex, cfg.Provider.ModelFast), WorkDir: d.workspace,
		Owner: r.node.ID, DataDir: cfg.DataDir,
	})
	if err != nil {
		return err
	}
	return r.Clock.Handle(heartbeat.Kind, r.Heartbeat.Handle)
}

// startSelfHeal registers the self-heal follow-ups on the due-work clock.
func (r *Runtime) startSelfHeal(provider pipeline.Provider, replies pipeline.ReplyHook, workspace string, noTools bool) error {
	ch, chat, err := r.Config.HeartbeatDestination()
	if err != nil {
		return err
	}
	r.SelfHeal, err = selfheal.New(selfheal.Config{
		Store: r.Store, Registry: r.Registry, Provider: provider, Markers: apply.CheckIn(replies), Channels: r,
		Clock: r.Clock, Logger: r.Logger, OwnerChannel: ch, OwnerChat: chat, Delay: r.Config.SelfHealDelay,
		Model: cmp.Or(r.Config.Provider.ModelComplex, r.Config.Provider.ModelFast), WorkDir: workspace, NoTools: noTools,
	})
	if err != nil {
		return err
	}
	return r.Clock.Handle(selfheal.Kind, r.SelfHeal.Handle)
}

// heartbeatNext reports the next check-in for /heartbeat.
func (r *Runtime) heartbeatNext(ctx context.Context, scope string) (time.Time, bool) {
	if r.Heartbeat == nil {
		return time.Time{}, false
	}
	next, err := r.Heartbeat.Next(ctx, scope)
	if err != nil {
		r.Logger.Warn("heartbeat: next check-in unknown", "scope", scope, "err", err)
		return time.Time{}, false
	}
	return next, true
}

// runClock runs the task follower and the due-work clock in g until ctx
// ends.
func (r *Runtime) runClock(ctx context.Context, g *errgroup.Group) {
	g.Go(func() error { return ignoreStop(ctx, r.Tasks.Run(ctx)) })
	g.Go(func() error {
		// In-process due work published before the router subscribed
		// would be dropped.
		select {
		case <-r.Buses.Router.Running():
		case <-ctx.Done():
			return nil
		}
		if r.Heartbeat != nil {
			r.Heartbeat.Start()
		}
		r.SelfHeal.Kick() // an effort outlives restarts
		return ignoreStop(ctx, r.Clock.Run(ctx))
	})
}

// Deliver is what channels call with each incoming message: a message
// seen before is acknowledged again without a second turn.
func (r *Runtime) Deliver(ctx context.Context, in channels.Incoming) error {
	id, err := r.Gateway.Receive(ctx, in)
	if errors.Is(err, intake.ErrDuplicate) {
		r.Logger.Info("duplicate message ignored", "channel", in.Channel, "platform_id", in.PlatformID)
		return nil
	}
	if err == nil {
		r.track(ctx, id)
	}
	return err
}

// receivedCap bounds the turns Deliver remembers for WaitIdle: past it the
// completed ones are forgotten, so a server that never waits does not
// remember every turn of its life.
const receivedCap = 1024

func (r *Runtime) track(ctx context.Context, id string) {
	r.mu.Lock()
	r.received = append(r.received, id)
	full := len(r.received) >= receivedCap
	r.mu.Unlock()
	if full {
		r.forgetCompleted(ctx)
	}
}

// forgetCompleted drops the remembered turns that have completed.
func (r *Runtime) forgetCompleted(ctx context.Context) {
	r.mu.Lock()
	ids := append([]string(nil), r.received...)
	r.mu.Unlock()
	done := map[string]bool{}
	for _, id := range ids {
		if ok, err := r.turnCompleted(ctx, id); err == nil && ok {
			done[id] = true
		}
	}
	r.mu.Lock()
	r.received = slices.DeleteFunc(r.received, func(id string) bool { return done[id] })
	r.mu.Unlock()
}

// WaitIdle waits until every turn delivered through Deliver has completed.
func (r *Runtime) WaitIdle(ctx context.Context) error {
	r.mu.Lock()
	ids := append([]string(nil), r.received...)
	r.mu.Unlock()
	for _, id := range ids {
		for {
			done, err := r.turnCompleted(ctx, id)
			if err != nil {
				return err
			}
			if done {
				break
			}
			if err := wait.Sleep(ctx, 50*time.Millisecond); err != nil {
				return err
			}
		}
	}
	r.forgetCompleted(ctx)
	return nil
}

func (r *Runtime) turnCompleted(ctx context.Context, id string) (bool, error) {
	evs, err := r.Store.Load(ctx, domain.TurnStream(id), 1)
	if err != nil {
		return false, err
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == turn.TurnCompleted{}.EventType(), nil
}

// Run runs everything until ctx ends, then shuts down: channels and the
// turn scheduler stop taking work (a turn in flight stops at its last
// recorded step and resumes at the next start), open conversations are
// summarized within OMEGA_SHUTDOWN_TIMEOUT (when SummarizeOnShutdown), the
// channels are stopped.
func (r *Runtime) Run(ctx context.Context) error {
	if err := r.Engine.Setup(ctx); err != nil {
		return err
	}
	// The log's followers outlive ctx: shutdown reads the conversations the
	// projections keep, and command handlers finish on the router.
	follow, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollowing()
	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var followers errgroup.Group
	for _, run := range []func(context.Context) error{r.Engine.Run, r.Buses.Router.Run} {
		followers.Go(func() error {
			err := ignoreStop(follow, run(follow))
			if err != nil {
				stopWork()
			}
			return err
		})
	}
	g, gctx := errgroup.WithContext(work)
	g.Go(func() error { return ignoreStop(gctx, r.Scheduler.Run(gctx)) })
	g.Go(func() error {
		// A command sent before the router runs would be dropped on SQLite.
		select {
		case <-r.Buses.Router.Running():
		case <-gctx.Done():
			return nil
		}
		return ignoreStop(gctx, r.Summarizer.Watch(gctx, r.Buses.CommandBus))
	})
	r.runClock(gctx, g)
	g.Go(func() error { return ignoreStop(gctx, r.Access.Run(gctx)) })
	r.health.run(gctx)
	for _, ch := range r.channels {
		g.Go(func() error {
			err := ch.Start(gctx, r.Deliver)
			if err != nil && gctx.Err() == nil {
				return fmt.Errorf("channel %s: %w", ch.Name(), err)
			}
			return nil
		})
	}
	err := g.Wait()
	r.shutdown()
	stopFollowing()
	if ferr := followers.Wait(); err == nil {
		err = ferr
	}
	_ = r.Buses.Close()
	_ = r.Clock.Close()
	if rerr := r.node.Release(); rerr != nil {
		r.Logger.Warn("release node identity", "err", rerr)
	}
	return err
}

// summarizeOpen summarizes the open conversations within the configured
// bound.
func (r *Runtime) summarizeOpen() {
	ctx, cancel := context.WithTimeout(context.Background(), r.Config.ShutdownTimeout)
	defer cancel()
	start := time.Now()
	// The read models must show the turns that just finished, or their
	// conversations would look busy and be left open.
	if err := r.Engine.CatchUp(ctx); err != nil {
		r.Logger.Warn("shutdown: catch up the read models", "err", err)
	}
	closed, open := r.Summarizer.SummarizeOpen(ctx)
	r.Logger.Info("shutdown: open conversations summarized", "closed", closed, "open", open, "took", time.Since(start).Round(time.Millisecond))
}

// shutdown summarizes the open conversations (when asked to) and stops
// the channels.
func (r *Runtime) shutdown() {
	if r.Summarizer != nil {
		// A summary still running in the background would race the ones
		// below for the same conversation, and outlive the store.
		r.Summarizer.Stop()
	}
	if r.summarizeOnShutdown {
		r.summarizeOpen()
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelStop()
	for _, ch := range r.channels {
		if serr := ch.Stop(stopCtx); serr != nil {
			r.Logger.Warn("stop channel", "channel", ch.Name(), "err", serr)
		}
	}
}

// ignoreStop drops the error of a part that ended because it was asked to
// stop. Not every such error is context.Canceled: a router stopped while
// it subscribes reports the subscription's rolled-back transaction.
func ignoreStop(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil //nolint:nilerr // the part was asked to stop: its error is the stop itself
	}
	return err
}
