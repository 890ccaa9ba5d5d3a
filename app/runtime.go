package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/omega-gateway/omega/app/channelhealth"
	"github.com/omega-gateway/omega/app/delivered"
	"github.com/omega-gateway/omega/app/nodeid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/access"
	budgethandler "github.com/omega-gateway/omega/handlers/budget"
	"github.com/omega-gateway/omega/handlers/build"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pairing"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/pipeline/gather"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/handlers/slash"
	"github.com/omega-gateway/omega/handlers/summarizer"
	"github.com/omega-gateway/omega/handlers/taskwork"
	"github.com/omega-gateway/omega/internal/live"
	"github.com/omega-gateway/omega/projections/recall"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/registry"
	"github.com/prometheus/client_golang/prometheus"
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
	// Builds runs the builds; nil in a re-run.
	Builds *build.Manager
	// Access is sender pairing and identity links.
	Access *access.Service
	// Live fans streamed replies out to the turns' watchers.
	Live *live.Hub
	// Budget is the spending guard in front of the provider: a new
	// caller of the provider tags its context (providers.WithCall) and
	// calls the provider it was given, or asks Budget.Allow itself.
	Budget   *budgethandler.Guard
	channels map[string]channels.Channel
	health   *channelhealth.Watch
	// summarizeOnShutdown: see RuntimeOptions.SummarizeOnShutdown.
	summarizeOnShutdown bool

	// inputs are the decision inputs this process runs with.
	inputs system.DecisionInputs
	node   *nodeid.Identity
	// delivered are the turns this process received, for WaitIdle.
	delivered *delivered.Turns
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

// recaller is what a turn's full-text recall searches: a re-run's
// recorded passages, else the index.
func (o RuntimeOptions) recaller(index *recall.Index) gather.Recaller {
	if o.Replay != nil && o.Replay.Recall != nil {
		return o.Replay.Recall
	}
	return index
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

// ChannelStates reports every running channel's receiving state, for the
// web UI.
func (r *Runtime) ChannelStates() []channelhealth.State {
	return r.health.States(slices.Collect(maps.Keys(r.channels)))
}

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

// prepared is what a runtime starts from: the prompts as written, the
// decision inputs, their time zone and the workspace.
type prepared struct {
	prompts   *prompts.Set
	inputs    system.DecisionInputs
	loc       *time.Location
	workspace string
}

// prepare loads the prompts, records the decision inputs and creates the
// workspace with its inbox.
func (a *App) prepare(ctx context.Context, opts RuntimeOptions) (prepared, error) {
	ps, err := prompts.Load(a.Config.DataDir)
	if err != nil {
		return prepared{}, err
	}
	inputs, err := a.decisionInputs(ctx, opts, authOf(opts).Allowed)
	if err != nil {
		return prepared{}, err
	}
	loc, err := location(inputs)
	if err != nil {
		return prepared{}, err
	}
	workspace := a.Config.WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(workspace, "inbox"), 0o700); err != nil {
		return prepared{}, fmt.Errorf("create workspace %s: %w", workspace, err)
	}
	return prepared{prompts: ps, inputs: inputs, loc: loc, workspace: workspace}, nil
}

// NewRuntime assembles the pipeline. A provider that cannot work does not
// stop it: turns are answered with an explanation and the problem is
// logged with what to install or set.
func (a *App) NewRuntime(ctx context.Context, opts RuntimeOptions) (_ *Runtime, err error) {
	cfg := a.Config
	p, err := a.prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	ps, inputs, loc, workspace := p.prompts, p.inputs, p.loc, p.workspace
	r, names, err := a.newRuntime(opts, inputs)
	if err != nil {
		return nil, err
	}
	if err := r.startSkills(ctx); err != nil {
		return nil, err
	}
	provider, problem, err := r.guardedProvider(ctx, loc, opts)
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
		Recall: opts.recaller(a.Recall),
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
	if err := r.startBackground(heartbeatDeps{replay: opts.Replay != nil, provider: provider, prompts: ps, replies: replies, read: read, loc: loc, sandbox: sandbox, workspace: workspace, projects: catalog, noTools: caps.NoTools}); err != nil {
		return nil, err
	}
	return r, nil
}

// newRuntime is a runtime with its channels, their health watch and the
// record of delivered turns; it returns the channels' names.
func (a *App) newRuntime(opts RuntimeOptions, inputs system.DecisionInputs) (*Runtime, []string, error) {
	r := &Runtime{App: a, channels: map[string]channels.Channel{}, summarizeOnShutdown: opts.SummarizeOnShutdown, inputs: inputs,
		Live: live.NewHub(0)}
	var err error
	if r.delivered, err = delivered.New(a.Store); err != nil {
		return nil, nil, err
	}
	names := r.addChannels(opts.Channels)
	if r.health, err = channelhealth.New(a.Store, owner{r}, a.Config.ChannelDownAlert, a.Logger); err != nil {
		return nil, nil, err
	}
	r.health.Attach(r.channels)
	return r, names, nil
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
