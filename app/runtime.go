package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers"
	"github.com/omega-gateway/omega/messaging"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// Runtime is a running gateway: channels feed the gateway, the scheduler
// drives turns, projections and buses follow the log.
type Runtime struct {
	*App
	Gateway   *handlers.Gateway
	Driver    *handlers.Driver
	Scheduler *handlers.Scheduler
	Buses     *messaging.Buses
	channels  map[string]channels.Channel

	mu       sync.Mutex
	received []string // turns this process received, for WaitIdle
}

// RuntimeOptions chooses what a process hosts.
type RuntimeOptions struct {
	Channels []channels.Channel
	// Provider replaces the configured one (tests, benchmarks).
	Provider handlers.Provider
	// Auth replaces the allowlists built from the configuration.
	Auth *handlers.Auth
	// Commands and Replies replace the default command and marker hooks.
	Commands handlers.CommandHook
	Replies  handlers.ReplyHook
	// WhatsApp pairs WhatsApp for /whatsapp and WHATSAPP_QR; nil means
	// WhatsApp is not enabled.
	WhatsApp handlers.WhatsAppPairing
	// BotName returns the bot's @name, so that "/cmd@name" is recognised.
	BotName func() string
	// Sandbox describes the provider's sandbox mode for /status.
	Sandbox string
}

// Channel implements handlers.ChannelSet.
func (r *Runtime) Channel(name string) (channels.Channel, bool) {
	ch, ok := r.channels[name]
	return ch, ok
}

// NewRuntime assembles the pipeline. A provider that cannot work does not
// stop it: turns are answered with an explanation and the problem is
// logged with what to install or set.
func (a *App) NewRuntime(ctx context.Context, opts RuntimeOptions) (*Runtime, error) {
	cfg := a.Config
	ps, err := prompts.Load(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	loc, err := cfg.Location()
	if err != nil {
		return nil, err
	}
	workspace := cfg.WorkspaceDir()
	if err := os.MkdirAll(filepath.Join(workspace, "inbox"), 0o700); err != nil {
		return nil, fmt.Errorf("create workspace %s: %w", workspace, err)
	}
	r := &Runtime{App: a, channels: map[string]channels.Channel{}}
	var names []string
	for _, ch := range opts.Channels {
		r.channels[ch.Name()] = ch
		names = append(names, ch.Name())
	}

	provider := opts.Provider
	var problem error
	if provider == nil {
		p, err := providers.New(cfg.Provider, a.Logger)
		if err != nil {
			return nil, err
		}
		if err := p.Check(ctx); err != nil {
			problem = err
			a.Logger.Error("the AI provider cannot work; messages will be answered with an explanation until this is fixed",
				"provider", cfg.Provider.Provider, "problem", err)
		}
		provider = p
	}
	auth := handlers.Auth{Allowed: map[string][]string{}}
	if opts.Auth != nil {
		auth = *opts.Auth
	}

	read := handlers.ReadModel{DB: a.Store.ReadDB()}
	effects := handlers.Effects{Store: a.Store, Registry: a.Registry, Read: read}
	replies := opts.Replies
	if replies == nil {
		replies = &handlers.Markers{Effects: effects, Location: loc, WhatsApp: opts.WhatsApp, Logger: a.Logger}
	}
	commands := opts.Commands
	if commands == nil {
		commands = &handlers.Commands{
			Effects: effects, WhatsApp: opts.WhatsApp, BotName: opts.BotName, Location: loc, Started: time.Now(),
			DataDir: cfg.DataDir, Status: handlers.StatusInfo{Provider: provider.Name(), Model: cfg.Provider.ModelFast,
				Channels: names, Store: string(a.Store.Backend()), Sandbox: opts.Sandbox},
		}
	}
	r.Driver = &handlers.Driver{
		Store: a.Store, Registry: a.Registry,
		Senders:  handlers.Senders{Store: a.Store, Registry: a.Registry},
		Read:     read,
		Channels: r, Provider: provider, Prompts: ps, Auth: auth,
		Commands: commands, Replies: replies,
		Config: handlers.DriverConfig{
			ModelFast: cfg.Provider.ModelFast, ModelComplex: cfg.Provider.ModelComplex, Classify: cfg.Classify,
			SkillsDir: filepath.Join(cfg.DataDir, "skills"), Workspace: workspace, ConversationIdle: cfg.ConversationIdle,
			Location: loc, HistoryLimit: cfg.HistoryLimit, StatusFirst: cfg.StatusFirst, StatusEvery: cfg.StatusEvery,
			TypingEvery: 5 * time.Second, ProviderProblem: problem,
		},
		Logger: a.Logger,
	}
	r.Scheduler = &handlers.Scheduler{
		Driver: r.Driver, Read: r.Driver.Read, Channels: names, Logger: a.Logger,
		Leases: &handlers.Leases{DB: a.Store.DB(), Owner: uuid.NewString(), TTL: cfg.LeaseTTL},
	}
	r.Scheduler.Init()
	r.Gateway = &handlers.Gateway{Store: a.Store, Inbox: filepath.Join(workspace, "inbox"), Kick: r.Scheduler.Kick}
	r.Buses, err = messaging.New(messaging.Options{Backend: a.Store.Backend(), DB: a.Store.DB(), Log: a.Store, Registry: a.Registry, Logger: a.Logger})
	if err != nil {
		return nil, err
	}
	senders := handlers.Senders{Store: a.Store, Registry: a.Registry}
	if err := r.Buses.AddCommandHandlers(ctx, senders.CommandHandlers()...); err != nil {
		return nil, err
	}
	return r, nil
}

// Deliver is what channels call with each incoming message: a message
// seen before is acknowledged again without a second turn.
func (r *Runtime) Deliver(ctx context.Context, in channels.Incoming) error {
	id, err := r.Gateway.Receive(ctx, in)
	if errors.Is(err, handlers.ErrDuplicate) {
		r.Logger.Info("duplicate message ignored", "channel", in.Channel, "platform_id", in.PlatformID)
		return nil
	}
	if err == nil {
		r.mu.Lock()
		r.received = append(r.received, id)
		r.mu.Unlock()
	}
	return err
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
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func (r *Runtime) turnCompleted(ctx context.Context, id string) (bool, error) {
	evs, err := r.Store.Load(ctx, domain.TurnStream(id), 1)
	if err != nil {
		return false, err
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == "TurnCompleted", nil
}

// Run runs everything until ctx ends, then stops the channels.
func (r *Runtime) Run(ctx context.Context) error {
	if err := r.Engine.Setup(ctx); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	r.Scheduler.Applied = r.Engine.Applied
	g.Go(func() error { return ignoreCancel(r.Engine.Run(gctx)) })
	g.Go(func() error { return ignoreCancel(r.Scheduler.Run(gctx)) })
	g.Go(func() error { return ignoreCancel(r.Buses.Router.Run(gctx)) })
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
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ch := range r.channels {
		if serr := ch.Stop(stopCtx); serr != nil {
			r.Logger.Warn("stop channel", "channel", ch.Name(), "err", serr)
		}
	}
	_ = r.Buses.Close()
	return err
}

func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
