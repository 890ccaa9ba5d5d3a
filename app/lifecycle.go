package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

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
	r.runClaudeMD(gctx, g)
	g.Go(func() error { return ignoreStop(gctx, r.Access.Run(gctx)) })
	if r.Builds != nil {
		g.Go(func() error { return ignoreStop(gctx, r.Builds.Run(gctx)) })
	}
	r.health.Start(gctx)
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
