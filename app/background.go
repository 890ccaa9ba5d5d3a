package app

import (
	"cmp"
	"context"
	"path/filepath"
	"time"

	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/projects"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/handlers/taskwork"
	"github.com/omega-gateway/omega/prompts"
)

// startBackground starts the loops that act without a message: the
// clock, self-healing, builds and the heartbeat.
func (r *Runtime) startBackground(d heartbeatDeps) error {
	if err := r.startClock(d.loc); err != nil {
		return err
	}
	if err := r.startSelfHeal(d.provider, d.replies, d.workspace, d.noTools); err != nil {
		return err
	}
	if err := r.startBuilds(d.replay, d.provider, d.workspace); err != nil {
		return err
	}
	return r.startHeartbeat(d)
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
	replay    bool // a re-run: no builds
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
