package taskwork_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/handlers/taskwork"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// flakyChannel fails the first sends with err, then delivers.
type flakyChannel struct {
	mu    sync.Mutex
	fails int
	err   error
	sent  []string
}

func (c *flakyChannel) Name() string                                        { return "fake" }
func (c *flakyChannel) Start(ctx context.Context, _ channels.Deliver) error { <-ctx.Done(); return nil }
func (c *flakyChannel) SendTyping(context.Context, string) error            { return nil }
func (c *flakyChannel) Stop(context.Context) error                          { return nil }
func (c *flakyChannel) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return nil
}
func (c *flakyChannel) SendText(_ context.Context, _, text string) (channels.SendResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fails > 0 {
		c.fails--
		return channels.SendResult{}, c.err
	}
	c.sent = append(c.sent, text)
	return channels.SendResult{PlatformIDs: []string{"m1"}}, nil
}
func (c *flakyChannel) Channel(string) (channels.Channel, bool) { return c, true }

type recordingClock struct{ items []duework.Item }

func (r *recordingClock) Set(it duework.Item)   { r.items = append(r.items, it) }
func (r *recordingClock) Remove(string, string) {}

type rig struct {
	sq    *sqlite.Store
	store eventstore.Store
	reg   *domain.Registry
	ch    *flakyChannel
	clock *recordingClock
	firer *taskwork.Firer
	now   time.Time
}

func newRig(t *testing.T, now time.Time) *rig {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	reg := events.NewRegistry()
	r := &rig{sq: s, store: s, reg: reg, ch: &flakyChannel{}, clock: &recordingClock{}, now: now}
	madrid, _ := time.LoadLocation("Europe/Madrid")
	r.firer, err = taskwork.NewFirer(taskwork.Config{Store: s, Registry: reg, Channels: r.ch, Profiles: senders.MustNew(s, reg),
		Clock: r.clock, Kick: func(string, string) {}, Location: madrid, Logger: quiet, Now: func() time.Time { return r.now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) schedule(t *testing.T, repeat string, due time.Time) string {
	t.Helper()
	id := "11111111-0000-4000-8000-000000000001"
	ev, err := domain.NewEventFrom(task.TaskScheduled{ID: id, Description: "water the plants", Due: due, Repeat: repeat,
		Kind: task.TaskKindReminder, Channel: "fake", SenderID: "ana", ChatID: "ana"}, domain.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Append(context.Background(), task.TaskStream(id), eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
	return id
}

func (r *rig) types(t *testing.T, id string) string {
	t.Helper()
	evs, err := r.store.Load(context.Background(), task.TaskStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return strings.Join(out, " ")
}

// A daily reminder missed for three days fires once, late, and moves to
// the next 09:00 Madrid time; firing it again early does nothing.
func TestMissedSeriesFiresOnceLate(t *testing.T) {
	madrid, _ := time.LoadLocation("Europe/Madrid")
	due := time.Date(2026, 3, 26, 9, 0, 0, 0, madrid)
	r := newRig(t, time.Date(2026, 3, 29, 12, 0, 0, 0, madrid)) // across the DST change
	id := r.schedule(t, task.RepeatDaily, due)
	if err := r.firer.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: id, Due: due}); err != nil {
		t.Fatal(err)
	}
	if got := r.types(t, id); got != "TaskScheduled TaskFired TaskDueAdvanced TaskDeliveryStarted TaskDelivered" {
		t.Fatalf("events: %s", got)
	}
	if len(r.ch.sent) != 1 || r.ch.sent[0] != "⏰ Reminder: water the plants (late: due 26 Mar 09:00)" {
		t.Fatalf("sent %q", r.ch.sent)
	}
	if err := r.firer.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: id, Due: due}); err != nil {
		t.Fatal(err)
	}
	next := time.Date(2026, 3, 30, 9, 0, 0, 0, madrid)
	if len(r.ch.sent) != 1 || len(r.clock.items) != 1 || !r.clock.items[0].Due.Equal(next) {
		t.Fatalf("early re-fire: sent %d, clock %+v (want %v)", len(r.ch.sent), r.clock.items, next)
	}
}

// A failure that may pass is tried again after a backoff, through the
// clock; the second attempt delivers.
func TestTransientFailureRetried(t *testing.T) {
	due := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due.Add(100*time.Millisecond))
	r.ch.fails, r.ch.err = 1, errors.New("connection reset")
	id := r.schedule(t, task.RepeatOnce, due)
	if err := r.firer.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: id, Due: due}); err != nil {
		t.Fatal(err)
	}
	if len(r.clock.items) != 1 || r.clock.items[0].Due.Sub(r.now) != 2*time.Second {
		t.Fatalf("retry not planned: %+v", r.clock.items)
	}
	r.now = r.clock.items[0].Due
	if err := r.firer.Handle(context.Background(), r.clock.items[0]); err != nil {
		t.Fatal(err)
	}
	if got := r.types(t, id); got != "TaskScheduled TaskFired TaskDeliveryStarted TaskDeliveryFailed TaskDeliveryStarted TaskDelivered" {
		t.Fatalf("events: %s", got)
	}
	if len(r.ch.sent) != 1 {
		t.Fatalf("sent %q", r.ch.sent)
	}
}

// An attempt left unsettled (the process died around the send) is sent
// again once stale, and the delivery says it may be a duplicate.
func TestUnsettledAttemptResentOnceStale(t *testing.T) {
	due := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due)
	id := r.schedule(t, task.RepeatOnce, due)
	evs, err := domain.NewEvents(domain.Metadata{}, task.TaskFired{ID: id, Occurrence: 1, Due: due, FiredAt: due},
		task.TaskDeliveryStarted{ID: id, Occurrence: 1, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Append(context.Background(), task.TaskStream(id), eventstore.Exact(1), evs...); err != nil {
		t.Fatal(err)
	}
	r.now = time.Now() // the attempt was just recorded: someone is sending
	if err := r.firer.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: id}); err != nil {
		t.Fatal(err)
	}
	if len(r.ch.sent) != 0 || len(r.clock.items) != 1 {
		t.Fatalf("a fresh attempt was not left alone: sent %d, clock %+v", len(r.ch.sent), r.clock.items)
	}
	r.now = r.clock.items[0].Due
	if err := r.firer.Handle(context.Background(), r.clock.items[0]); err != nil {
		t.Fatal(err)
	}
	if len(r.ch.sent) != 1 || !strings.HasSuffix(r.types(t, id), "TaskDeliveryStarted TaskDelivered") {
		t.Fatalf("sent %d, events %s", len(r.ch.sent), r.types(t, id))
	}
	last, _ := r.store.Load(context.Background(), task.TaskStream(id), 5)
	p, err := r.reg.Decode(last[len(last)-1])
	if err != nil {
		t.Fatal(err)
	}
	if d := p.(task.TaskDelivered); !d.MaybeDuplicate || d.Attempt != 2 {
		t.Fatalf("delivery %+v", d)
	}
}

// failingStore fails every read, like a database that is down.
type failingStore struct{ eventstore.Store }

func (failingStore) Load(context.Context, string, int64) ([]domain.Event, error) {
	return nil, errors.New("connection refused")
}

// A firing that fails for the database's sake comes back on the clock a
// minute later, whatever the router's retries and poison queue do.
func TestFailedFiringReturnsToTheClock(t *testing.T) {
	due := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due)
	f, err := taskwork.NewFirer(taskwork.Config{Store: failingStore{r.store}, Registry: r.reg, Channels: r.ch,
		Profiles: senders.MustNew(r.store, r.reg), Clock: r.clock, Kick: func(string, string) {},
		Logger: quiet, Now: func() time.Time { return due }})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: "x", Due: due}); err == nil {
		t.Fatal("no error from a failing store")
	}
	if len(r.clock.items) != 1 || !r.clock.items[0].Due.Equal(due.Add(time.Minute)) {
		t.Fatalf("clock %+v", r.clock.items)
	}
}

// An action fired before a crash that left its turn recorded but not its
// start finds the same turn again: one turn, one MessageReceived.
func TestActionRefiredAfterCrashReusesItsTurn(t *testing.T) {
	due := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	r := newRig(t, due)
	var kicked []string
	f, err := taskwork.NewFirer(taskwork.Config{Store: r.store, Registry: r.reg, Channels: r.ch,
		Profiles: senders.MustNew(r.store, r.reg), Clock: r.clock, Logger: quiet,
		Kick: func(_, tn string) { kicked = append(kicked, tn) }, Now: func() time.Time { return due }})
	if err != nil {
		t.Fatal(err)
	}
	id := "33333333-0000-4000-8000-000000000003"
	r.appendTask(t, id, 0, task.TaskScheduled{ID: id, Description: "check prices", Due: due, Repeat: task.RepeatOnce,
		Kind: task.TaskKindAction, Project: "shop", Channel: "fake", SenderID: "ana", ChatID: "ana"})
	it := duework.Item{Kind: taskwork.Kind, ID: id, Due: due}
	if err := f.Handle(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	if len(kicked) != 1 {
		t.Fatalf("kicked %v", kicked)
	}
	tn := domain.TurnStream(kicked[0])
	// Undo the start, as if the process had died before recording it.
	evs, _ := r.store.Load(context.Background(), task.TaskStream(id), 1)
	if evs[len(evs)-1].Type != "TaskActionStarted" {
		t.Fatalf("events %s", r.types(t, id))
	}
	r2 := newRig(t, due)
	for _, e := range evs[:len(evs)-1] {
		ev := domain.NewEvent{ID: e.ID, Type: e.Type, Data: e.Data, Metadata: e.Metadata}
		if _, err := r2.store.Append(context.Background(), e.StreamID, eventstore.Any, ev); err != nil {
			t.Fatal(err)
		}
	}
	msg, _ := r.store.Load(context.Background(), tn, 1)
	if _, err := r2.store.Append(context.Background(), tn, eventstore.NoStream,
		domain.NewEvent{ID: msg[0].ID, Type: msg[0].Type, Data: msg[0].Data, Metadata: msg[0].Metadata}); err != nil {
		t.Fatal(err)
	}
	kicked = nil
	f2, err := taskwork.NewFirer(taskwork.Config{Store: r2.store, Registry: r2.reg, Channels: r2.ch,
		Profiles: senders.MustNew(r2.store, r2.reg), Clock: r2.clock, Logger: quiet,
		Kick: func(_, tn string) { kicked = append(kicked, tn) }, Now: func() time.Time { return due }})
	if err != nil {
		t.Fatal(err)
	}
	if err := f2.Handle(context.Background(), it); err != nil {
		t.Fatal(err)
	}
	if len(kicked) != 1 || domain.TurnStream(kicked[0]) != tn {
		t.Fatalf("re-fire kicked %v, want %s", kicked, tn)
	}
	if got := r2.types(t, id); got != "TaskScheduled TaskFired TaskActionStarted" {
		t.Fatalf("events %s", got)
	}
	if n, _ := r2.store.StreamVersion(context.Background(), tn); n != 1 {
		t.Fatalf("turn has %d events", n)
	}
	p, err := r2.reg.Decode(msg[0])
	if err != nil {
		t.Fatal(err)
	}
	if m := p.(turn.MessageReceived); m.Task == nil || m.Task.Project != "shop" || m.Task.Occurrence != 1 {
		t.Fatalf("turn input %+v", m)
	}
}

// An attempt this node started and is not making (an earlier run of the
// node died around the send) is sent again at once, without waiting for
// it to go stale; one another node started is left alone until then.
func TestOwnCutOffAttemptResentAtOnce(t *testing.T) {
	for _, c := range []struct {
		owner  string
		resent bool
	}{{"node-a", true}, {"node-b", false}, {"", false}} {
		t.Run("owner="+c.owner, func(t *testing.T) {
			due := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			r := newRig(t, due)
			f, err := taskwork.NewFirer(taskwork.Config{Store: r.store, Registry: r.reg, Channels: r.ch, Profiles: senders.MustNew(r.store, r.reg),
				Clock: r.clock, Kick: func(string, string) {}, Logger: quiet, Now: func() time.Time { return r.now }, Node: "node-a"})
			if err != nil {
				t.Fatal(err)
			}
			id := r.schedule(t, task.RepeatOnce, due)
			evs, err := domain.NewEvents(domain.Metadata{}, task.TaskFired{ID: id, Occurrence: 1, Due: due, FiredAt: due},
				task.TaskDeliveryStarted{ID: id, Occurrence: 1, Attempt: 1, Owner: c.owner})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.store.Append(context.Background(), task.TaskStream(id), eventstore.Exact(1), evs...); err != nil {
				t.Fatal(err)
			}
			r.now = time.Now() // the attempt was just recorded
			if err := f.Handle(context.Background(), duework.Item{Kind: taskwork.Kind, ID: id}); err != nil {
				t.Fatal(err)
			}
			if resent := len(r.ch.sent) == 1; resent != c.resent {
				t.Fatalf("sent %q, events %s", r.ch.sent, r.types(t, id))
			}
			if c.resent && !strings.HasSuffix(r.types(t, id), "TaskDeliveryStarted TaskDeliveryStarted TaskDelivered") {
				t.Fatalf("events %s", r.types(t, id))
			}
		})
	}
}
