package taskwork_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/taskwork"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
)

// syncClock records what the follower tells the clock.
type syncClock struct {
	mu  sync.Mutex
	due map[string]time.Time
}

func (c *syncClock) Set(it duework.Item) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.due[it.ID] = it.Due
}

func (c *syncClock) Remove(_, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.due, id)
}

func (c *syncClock) get(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.due[id]
	return d, ok
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The follower loads what the read model knows, then learns of new,
// moved and cancelled tasks from the log as they are recorded.
func TestFollowerTracksTaskChanges(t *testing.T) {
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due)
	engine := engine.New(r.sq.DB(), r.sq, readmodel.SQLite, r.reg, quiet, tasks.ReadModel{})
	if err := engine.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	a := r.schedule(t, task.RepeatOnce, due)
	if err := engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &syncClock{due: map[string]time.Time{}}
	f, err := taskwork.NewFollower(r.sq, r.reg, mustQueries(t, r.sq.ReadDB()), clock, quiet)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "the loaded task", func() bool { d, ok := clock.get(a); return ok && d.Equal(due) })

	b := "22222222-0000-4000-8000-000000000002"
	later := due.Add(time.Hour)
	r.appendTask(t, b, 0, task.TaskScheduled{ID: b, Description: "b", Due: due, Repeat: task.RepeatOnce,
		Kind: task.TaskKindReminder, Channel: "fake", SenderID: "ana", ChatID: "ana"})
	eventually(t, "the new task", func() bool { _, ok := clock.get(b); return ok })
	r.appendTask(t, b, 1, task.TaskUpdated{ID: b, Due: later})
	eventually(t, "the moved task", func() bool { d, _ := clock.get(b); return d.Equal(later) })
	r.appendTask(t, a, 1, task.TaskCancelled{ID: a, Reason: "command"})
	eventually(t, "the cancelled task gone", func() bool { _, ok := clock.get(a); return !ok })
}

func (r *rig) appendTask(t *testing.T, id string, version int64, p domain.Payload) {
	t.Helper()
	ev, err := domain.NewEventFrom(p, domain.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Append(context.Background(), task.TaskStream(id), eventstore.Exact(version), ev); err != nil {
		t.Fatal(err)
	}
}

func mustQueries(t *testing.T, db *sql.DB) *projections.Queries {
	t.Helper()
	q, err := projections.NewQueries(db, readmodel.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// flakyDue fails its first loads, like a database that is restarting.
type flakyDue struct {
	mu    sync.Mutex
	fails int
	next  taskwork.DueTasks
}

func (d *flakyDue) DueTasks(ctx context.Context) (int64, []projections.DueTask, error) {
	d.mu.Lock()
	failing := d.fails > 0
	d.fails--
	d.mu.Unlock()
	if failing {
		return 0, nil, sql.ErrConnDone
	}
	return d.next.DueTasks(ctx)
}

// A load of the due tasks that fails (the database restarts) is tried
// again: the follower does not end, and the clock learns of the tasks.
func TestFollowerOutlivesFailedLoads(t *testing.T) {
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due)
	engine := engine.New(r.sq.DB(), r.sq, readmodel.SQLite, r.reg, quiet, tasks.ReadModel{})
	if err := engine.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	a := r.schedule(t, task.RepeatOnce, due)
	if err := engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &syncClock{due: map[string]time.Time{}}
	f, err := taskwork.NewFollower(r.sq, r.reg, &flakyDue{fails: 2, next: mustQueries(t, r.sq.ReadDB())}, clock, quiet)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	ended := make(chan error, 1)
	go func() { ended <- f.Run(runCtx) }()
	t.Cleanup(cancel)
	deadline := time.After(5 * time.Second)
	for {
		if d, ok := clock.get(a); ok && d.Equal(due) {
			return
		}
		select {
		case err := <-ended:
			t.Fatalf("the follower ended: %v", err)
		case <-deadline:
			t.Fatal("timed out: the loaded task")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
