// Package effects records what a turn's markers and slash commands ask
// for on the streams they concern (tasks, sender profiles, learning),
// each change at most once, and handles the task commands of the bus.
package effects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
)

// Recorder records what markers and commands ask for on the streams they
// concern. Every change carries a key as its causation id, and a change
// whose key the stream already holds is not made again: a turn that
// crashed halfway through its markers can run them again safely.
type Recorder struct {
	store    eventstore.Store
	registry *domain.Registry
	read     *projections.Queries
}

// New returns a Recorder; read finds tasks by id prefix.
func New(store eventstore.Store, reg *domain.Registry, read *projections.Queries) (Recorder, error) {
	if store == nil || reg == nil || read == nil {
		return Recorder{}, errors.New("effects: a store, a registry and the read models are required")
	}
	return Recorder{store: store, registry: reg, read: read}, nil
}

// Store is the event store the recorder writes to.
func (x Recorder) Store() eventstore.Store { return x.store }

// Registry is the event registry the recorder decodes with.
func (x Recorder) Registry() *domain.Registry { return x.registry }

// Read is the read models the recorder looks tasks up in.
func (x Recorder) Read() *projections.Queries { return x.read }

// taskNamespace derives task ids from the turn and marker that created
// them, so a re-run schedules the same task, not a second one.
var taskNamespace = uuid.MustParse("5b0c3f0e-8a53-4c0e-9d0e-6f1f1b4c7a21")

// TaskID is the deterministic id of the task created under key.
func TaskID(key string) string { return uuid.NewSHA1(taskNamespace, []byte(key)).String() }

// onceState remembers which keys a stream already holds.
type onceState struct {
	inner eventstore.Aggregate
	seen  map[string]bool
}

func (o *onceState) Observe(e domain.Event) {
	if e.Metadata.CausationID != "" {
		o.seen[e.Metadata.CausationID] = true
	}
}

func (o *onceState) Apply(p domain.Payload, version int64, at time.Time) {
	o.inner.Apply(p, version, at)
}

// Once runs decide on the stream's state (fresh returns a zero state for
// each attempt) unless md.CausationID is already recorded there. It
// reports whether the change was made by an earlier run.
func (x Recorder) Once(ctx context.Context, stream string, md domain.Metadata, fresh func() eventstore.Aggregate, decide func() ([]domain.Payload, error)) (done bool, err error) {
	_, _, err = eventstore.Update(ctx, x.store, x.registry, stream, md,
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

// TaskLookup is the outcome of resolving an id prefix.
type TaskLookup int

const (
	TaskFound TaskLookup = iota
	TaskMissing
	TaskAmbiguous
)

// FindTask resolves a task id prefix among the sender's tasks.
func (x Recorder) FindTask(ctx context.Context, sender, prefix string) (projections.TaskRow, TaskLookup, error) {
	all, err := x.read.SenderTasks(ctx, sender, false)
	if err != nil {
		return projections.TaskRow{}, TaskMissing, err
	}
	switch m := matchTasks(all, prefix); len(m) {
	case 0:
		return projections.TaskRow{}, TaskMissing, nil
	case 1:
		return m[0], TaskFound, nil
	default:
		return projections.TaskRow{}, TaskAmbiguous, nil
	}
}

// ScheduleTask records a new task; it returns the recorded task.
func (x Recorder) ScheduleTask(ctx context.Context, md domain.Metadata, s task.TaskScheduled) (task.Task, error) {
	tk := &task.Task{}
	_, err := x.Once(ctx, task.TaskStream(s.ID), md, func() eventstore.Aggregate { tk = &task.Task{}; return tk },
		func() ([]domain.Payload, error) {
			ps, err := tk.Schedule(s)
			if errors.Is(err, task.ErrTaskExists) {
				return nil, nil
			}
			return ps, err
		})
	return *tk, err
}

// CancelTask cancels a task by id.
func (x Recorder) CancelTask(ctx context.Context, md domain.Metadata, id, reason string) (task.Task, error) {
	tk := &task.Task{}
	_, err := x.Once(ctx, task.TaskStream(id), md, func() eventstore.Aggregate { tk = &task.Task{}; return tk },
		func() ([]domain.Payload, error) { return tk.Cancel(md.CorrelationID, reason) })
	return *tk, err
}

// UpdateTask changes a task by id.
func (x Recorder) UpdateTask(ctx context.Context, md domain.Metadata, u task.TaskUpdated) (task.Task, error) {
	tk := &task.Task{}
	_, err := x.Once(ctx, task.TaskStream(u.ID), md, func() eventstore.Aggregate { tk = &task.Task{}; return tk },
		func() ([]domain.Payload, error) { return tk.Update(u) })
	return *tk, err
}

// MustNew is New for wiring whose dependencies are known to be present
// (tests, a runtime that has just opened them); it panics on error.
func MustNew(store eventstore.Store, reg *domain.Registry, read *projections.Queries) Recorder {
	x, err := New(store, reg, read)
	if err != nil {
		panic(err)
	}
	return x
}
