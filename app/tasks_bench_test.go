package app_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/taskwork"
	"golang.org/x/sync/errgroup"
)

// BenchmarkTaskClock: 10,000 pending reminders of which 1,000 fall due in
// the same second, delivered through an instant channel. It reports the
// lateness from due time to recorded delivery (p50, p99, max) and how
// many queries the clock makes per minute while nothing is due.
//
//	go test -run '^$' -bench TaskClock -benchtime 1x -timeout 20m ./app/
func BenchmarkTaskClock(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchTaskClock(b, map[string]string{}) })
	b.Run("postgres", func(b *testing.B) {
		// A database of its own: NOTIFY reaches every listener of a
		// database, and other work there would wake the clock.
		benchTaskClock(b, map[string]string{"OMEGA_DATABASE_URL": benchPostgresDSNIn(b, "omega_bench_clock")})
	})
}

const (
	benchTasks = 10_000
	benchDue   = 1_000
)

func benchTaskClock(b *testing.B, extra map[string]string) {
	for range b.N {
		vars := map[string]string{"OMEGA_DATA_DIR": b.TempDir(), "OMEGA_LEASE_TTL": "5s", "HOME": b.TempDir()}
		for k, v := range extra {
			vars[k] = v
		}
		ch := &fakeChannel{name: "testchat"}
		n := startNodeWith(b, vars, app.RuntimeOptions{Provider: instantProvider{}, Channels: []channels.Channel{ch}})
		s, reg := n.rt.Store, n.rt.Registry

		far := time.Now().Add(24 * time.Hour)
		scheduleTasksFrom(b, s, reg, benchDue, benchTasks-benchDue, func(int) time.Time { return far })
		// The burst: every task due within one second, a few seconds out so
		// that the clock learns of them from the log before they fall due.
		second := time.Now().Add(11 * time.Second).Truncate(time.Second)
		ids := scheduleTasksFrom(b, s, reg, 0, benchDue, func(i int) time.Time { return second.Add(time.Duration(i) * time.Millisecond) })
		if time.Now().After(second) {
			b.Fatalf("scheduling the burst took too long; it was already due")
		}
		deadline := time.Now().Add(2 * time.Minute)
		for len(ch.texts("allowed")) < benchDue {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d delivered", len(ch.texts("allowed")), benchDue)
			}
			time.Sleep(10 * time.Millisecond)
		}
		late := lateness(b, s, reg, ids)
		b.ReportMetric(ms(late[len(late)/2]), "p50-ms")
		b.ReportMetric(ms(late[len(late)*99/100]), "p99-ms")
		b.ReportMetric(ms(late[len(late)-1]), "max-ms")
		b.ReportMetric(idleQueriesPerMinute(b, n.rt), "idle-queries/min")
		n.stop()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// scheduleTasksFrom records count reminders numbered from first, from 16
// writers at once.
func scheduleTasksFrom(b testing.TB, s eventstore.Store, reg *domain.Registry, first, count int, due func(i int) time.Time) []string {
	ids := make([]string, count)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range count {
		g.Go(func() error { return scheduleOne(s, reg, ids, first, i, due) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	return ids
}

// scheduleOne records reminder first+i ("task <n>") for the testchat
// sender "allowed".
func scheduleOne(s eventstore.Store, reg *domain.Registry, ids []string, first, i int, due func(i int) time.Time) error {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", first+i)
	ids[i] = id
	ev, err := domain.NewEventFrom(task.TaskScheduled{ID: id, Description: fmt.Sprintf("task %d", first+i), Due: due(i).UTC(),
		Repeat: task.RepeatOnce, Kind: task.TaskKindReminder, Channel: "testchat", SenderID: "allowed", ChatID: "allowed"},
		domain.Metadata{Channel: "testchat", Sender: "allowed"})
	if err != nil {
		return err
	}
	ev.Metadata.SchemaVersion = reg.SchemaVersion(ev.Type)
	_, err = s.Append(context.Background(), task.TaskStream(id), eventstore.NoStream, ev)
	return err
}

// lateness returns, sorted, how long after its due time each task's
// delivery was recorded.
func lateness(b *testing.B, s eventstore.Store, reg *domain.Registry, ids []string) []time.Duration {
	var out []time.Duration
	for _, id := range ids {
		evs, err := s.Load(context.Background(), task.TaskStream(id), 1)
		if err != nil {
			b.Fatal(err)
		}
		var due time.Time
		for _, e := range evs {
			switch e.Type {
			case "TaskScheduled":
				p, err := reg.Decode(e)
				if err != nil {
					b.Fatal(err)
				}
				due = p.(task.TaskScheduled).Due
			case "TaskDelivered":
				out = append(out, e.RecordedAt.Sub(due))
			}
		}
	}
	if len(out) != len(ids) {
		b.Fatalf("%d deliveries recorded for %d tasks", len(out), len(ids))
	}
	slices.Sort(out)
	return out
}

// countingStore counts the reads the clock's follower makes.
type countingStore struct {
	eventstore.Store
	reads atomic.Int64
}

func (c *countingStore) ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error) {
	c.reads.Add(1)
	return c.Store.ReadAll(ctx, after, limit)
}

type nopClock struct{}

func (nopClock) Set(duework.Item)      {}
func (nopClock) Remove(string, string) {}

// idleQueriesPerMinute runs a second task follower beside the node's, on a
// store that counts reads, through a quiet minute: every query the clock
// needs while nothing changes.
func idleQueriesPerMinute(b *testing.B, rt *app.Runtime) float64 {
	cs := &countingStore{Store: rt.Store}
	f, err := taskwork.NewFollower(cs, rt.Registry, rt.Queries, nopClock{}, quiet)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	time.Sleep(2 * time.Second) // start-up: the load and the first read
	before := cs.reads.Load()
	time.Sleep(time.Minute)
	after := cs.reads.Load()
	cancel()
	<-done
	return float64(after - before)
}
