package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
)

// Effects records what markers and commands ask for on the streams they
// concern. Every change carries a key as its causation id, and a change
// whose key the stream already holds is not made again: a turn that
// crashed halfway through its markers can run them again safely.
type Effects struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Read     *projections.Queries
}

// taskNamespace derives task ids from the turn and marker that created
// them, so a re-run schedules the same task, not a second one.
var taskNamespace = uuid.MustParse("5b0c3f0e-8a53-4c0e-9d0e-6f1f1b4c7a21")

// TaskID is the deterministic id of the task created under key.
func TaskID(key string) string { return uuid.NewSHA1(taskNamespace, []byte(key)).String() }

// timeFolder adapts a domain aggregate to Folder.
type timeFolder struct {
	s interface {
		Apply(p domain.Payload, version int64, at time.Time)
	}
}

func (f timeFolder) Apply(p domain.Payload, version int64, e domain.Event) {
	f.s.Apply(p, version, e.RecordedAt)
}

// onceState remembers which keys a stream already holds.
type onceState struct {
	inner Folder
	seen  map[string]bool
}

func (o *onceState) Apply(p domain.Payload, version int64, e domain.Event) {
	if e.Metadata.CausationID != "" {
		o.seen[e.Metadata.CausationID] = true
	}
	o.inner.Apply(p, version, e)
}

// once runs decide on the stream's state unless md.CausationID is already
// recorded there. It reports whether the change was made by an earlier run.
func (x Effects) once(ctx context.Context, stream string, md domain.Metadata, fresh func() Folder, decide func() ([]domain.Payload, error)) (done bool, err error) {
	_, _, err = Update(ctx, x.Store, x.Registry, stream, md,
		func() *onceState { return &onceState{inner: fresh(), seen: map[string]bool{}} },
		func(o *onceState) ([]domain.Payload, error) {
			if done = o.seen[md.CausationID]; done {
				return nil, nil
			}
			return decide()
		})
	if err != nil {
		return false, fmt.Errorf("%s: %w", stream, err)
	}
	return done, nil
}

// taskLookup is the outcome of resolving an id prefix.
type taskLookup int

const (
	taskFound taskLookup = iota
	taskMissing
	taskAmbiguous
)

func (x Effects) findTask(ctx context.Context, sender, prefix string) (projections.TaskRow, taskLookup, error) {
	all, err := x.Read.SenderTasks(ctx, sender, false)
	if err != nil {
		return projections.TaskRow{}, taskMissing, err
	}
	switch m := matchTasks(all, prefix); len(m) {
	case 0:
		return projections.TaskRow{}, taskMissing, nil
	case 1:
		return m[0], taskFound, nil
	default:
		return projections.TaskRow{}, taskAmbiguous, nil
	}
}

// scheduleTask records a new task; it returns the recorded task.
func (x Effects) scheduleTask(ctx context.Context, md domain.Metadata, s domain.TaskScheduled) (domain.Task, error) {
	task := &domain.Task{}
	_, err := x.once(ctx, domain.TaskStream(s.ID), md, func() Folder { task = &domain.Task{}; return timeFolder{task} },
		func() ([]domain.Payload, error) {
			ps, err := task.Schedule(s)
			if errors.Is(err, domain.ErrTaskExists) {
				return nil, nil
			}
			return ps, err
		})
	return *task, err
}

// cancelTask cancels a task by id.
func (x Effects) cancelTask(ctx context.Context, md domain.Metadata, id, reason string) (domain.Task, error) {
	task := &domain.Task{}
	_, err := x.once(ctx, domain.TaskStream(id), md, func() Folder { task = &domain.Task{}; return timeFolder{task} },
		func() ([]domain.Payload, error) { return task.Cancel(md.CorrelationID, reason) })
	return *task, err
}

// updateTask changes a task by id.
func (x Effects) updateTask(ctx context.Context, md domain.Metadata, u domain.TaskUpdated) (domain.Task, error) {
	task := &domain.Task{}
	_, err := x.once(ctx, domain.TaskStream(u.ID), md, func() Folder { task = &domain.Task{}; return timeFolder{task} },
		func() ([]domain.Payload, error) { return task.Update(u) })
	return *task, err
}
