package taskwork

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections"
)

// Follower keeps the clock's view of tasks: every task that needs it at
// start (from the tasks read model), then each change as it reaches the
// log, whichever process made it.
type Follower struct {
	store    eventstore.Store
	registry *domain.Registry
	due      DueTasks
	clock    Clock
	logger   *slog.Logger
}

// DueTasks reads the tasks that need the clock from the tasks read model,
// with the log position the answer reflects.
type DueTasks interface {
	DueTasks(ctx context.Context) (int64, []projections.DueTask, error)
}

// NewFollower checks the dependencies and returns a follower.
func NewFollower(store eventstore.Store, reg *domain.Registry, due DueTasks, clock Clock, logger *slog.Logger) (*Follower, error) {
	if store == nil || reg == nil || due == nil || clock == nil || logger == nil {
		return nil, errors.New("taskwork: follower needs store, registry, due tasks, clock and logger")
	}
	return &Follower{store: store, registry: reg, due: due, clock: clock, logger: logger}, nil
}

// idlePoll bounds how long a change can go unseen when its signal is
// lost. Changes arrive as signals (LISTEN/NOTIFY on PostgreSQL, with a
// signal on reconnection; the store's own commits and data_version on
// SQLite), so the poll is only a safety net, and idle costs one read of
// the log per idlePoll.
const idlePoll = 5 * time.Minute

// Run loads the tasks that need the clock, then follows the log from the
// position that load reflects until ctx ends. A database that cannot be
// read (restarting, refusing connections) delays the clock's view, it
// never ends it: the load is tried again with a capped backoff, and the
// log's reads are retried by eventstore.Follow.
func (f *Follower) Run(ctx context.Context) error {
	backoff := loadRetryMin
	for {
		err := f.follow(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.logger.Error("task clock: following the tasks failed; retrying", "err", err, "retry_in", backoff)
		if err := wait.Sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(backoff*2, loadRetryMax)
	}
}

// Bounds of the pause before the tasks are loaded again after a failure.
const (
	loadRetryMin = 100 * time.Millisecond
	loadRetryMax = 5 * time.Second
)

// follow loads the due tasks and follows the log after the load's
// position until ctx ends or a step fails.
func (f *Follower) follow(ctx context.Context) error {
	pos, due, err := f.due.DueTasks(ctx)
	if err != nil {
		return fmt.Errorf("load the due tasks: %w", err)
	}
	for _, t := range due {
		f.clock.Set(duework.Item{Kind: Kind, ID: t.ID, Due: t.Due})
	}
	f.logger.Info("task clock started", "tasks", len(due), "after", pos)
	return eventstore.Follow(ctx, f.store, pos, eventstore.FollowOptions{BatchSize: 500, PollInterval: idlePoll, Name: "task clock", Logger: f.logger},
		func(_ context.Context, evs []domain.Event) (int64, error) {
			for _, e := range evs {
				f.apply(e)
			}
			return evs[len(evs)-1].Position, nil
		})
}

// apply tells the clock what one event changes. The firer reads the
// task's stream before acting, so a stale or early hint costs a read,
// never a wrong firing.
func (f *Follower) apply(e domain.Event) {
	if !strings.HasPrefix(e.StreamID, "task-") {
		return
	}
	switch e.Type {
	case task.TaskScheduled{}.EventType(), task.TaskUpdated{}.EventType(), task.TaskDueAdvanced{}.EventType(), task.TaskCancelled{}.EventType():
	default:
		return
	}
	p, err := f.registry.Decode(e)
	if err != nil {
		f.logger.Error("task event not understood; the clock skips it", "position", e.Position, "type", e.Type, "err", err)
		return
	}
	switch ev := p.(type) {
	case task.TaskScheduled:
		f.clock.Set(duework.Item{Kind: Kind, ID: ev.ID, Due: ev.Due})
	case task.TaskUpdated:
		if !ev.Due.IsZero() {
			f.clock.Set(duework.Item{Kind: Kind, ID: ev.ID, Due: ev.Due})
		}
	case task.TaskDueAdvanced:
		f.clock.Set(duework.Item{Kind: Kind, ID: ev.ID, Due: ev.Due})
	case task.TaskCancelled:
		f.clock.Remove(Kind, ev.ID)
	}
	// TaskFired is left alone: the firer may already have put the task
	// back for a retry, and the firer of another process settles its own.
}
