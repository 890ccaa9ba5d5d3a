package pipeline_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/providers"
)

// A turn received by another process, not yet in this process's read
// model, runs before a later turn of the same sender kicked here: the
// order comes from the log, not from what the read model happens to show.
func TestKickedTurnWaitsForEarlierTurnOfAnotherProcess(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			p := newPipeline(t, store, db, dialect)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			// The read model starts following the log only once a turn
			// has called the provider: until then it shows neither turn.
			var follow sync.Once
			engineDone := make(chan struct{})
			p.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
				follow.Do(func() {
					go func() {
						defer close(engineDone)
						_ = p.engine.Run(ctx)
					}()
				})
				return providers.Response{Text: "re: " + req.Prompt}, nil
			}
			schedDone := make(chan struct{})
			go func() {
				defer close(schedDone)
				_ = p.scheduler.Run(ctx)
			}()

			// The read models show the set-up (the sender's welcome) first.
			if err := p.engine.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			first, second := uuid.NewString(), uuid.NewString()
			p.receive(t, first, "first") // by the other process: no kick here
			p.receive(t, second, "second")
			p.scheduler.Kick(chanName+"-"+senderID, second)

			eventually(t, "both turns", func() bool { return p.completed(t, first) && p.completed(t, second) })
			reqs := p.provider.requests()
			if len(reqs) != 2 || reqs[0].Prompt != "first" || reqs[1].Prompt != "second" {
				var got []string
				for _, r := range reqs {
					got = append(got, r.Prompt)
				}
				t.Fatalf("provider prompts %q, want [first second]", got)
			}
			if h := reqs[1].History; len(h) != 2 || h[1].Content != "re: first" {
				t.Errorf("second turn's history %+v, want the first exchange", h)
			}
			cancel()
			<-schedDone
			follow.Do(func() { close(engineDone) })
			<-engineDone
		})
	}
}

// A turn's context is read from the read models, so a turn waits until
// they show what was logged before its message: a conversation closed
// (summarized after going idle) just before the message is not continued
// by it, though the message reached the scheduler before the read models
// applied the closing.
func TestTurnWaitsForTheReadModelsToShowWhatCameBeforeIt(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			p := newPipeline(t, store, db, dialect)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
				return providers.Response{Text: "re: " + req.Prompt}, nil
			}
			schedDone := make(chan struct{})
			go func() {
				defer close(schedDone)
				_ = p.scheduler.Run(ctx)
			}()
			engineCtx, stopEngine := context.WithCancel(ctx)
			engineDone := make(chan struct{})
			go func() {
				defer close(engineDone)
				_ = p.engine.Run(engineCtx)
			}()

			first := uuid.NewString()
			p.receive(t, first, "first")
			p.scheduler.Kick(chanName+"-"+senderID, first)
			eventually(t, "the first turn", func() bool { return p.completed(t, first) })
			conv := conversationOf(t, p, first)
			eventually(t, "the read model to show the first turn", func() bool { return appliedCompletion(t, db, first) })
			stopEngine()
			<-engineDone

			closed, err := domain.NewEvents(domain.Metadata{Channel: chanName, Sender: senderID},
				turn.ConversationClosed{ConversationID: conv, Sender: chanName + "-" + senderID, Summary: "talked about first", Reason: "idle"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Append(ctx, summary.SummaryStream(conv), eventstore.Any, closed...); err != nil {
				t.Fatal(err)
			}
			second := uuid.NewString()
			p.receive(t, second, "second")
			p.scheduler.Kick(chanName+"-"+senderID, second)
			// Whatever the scheduler does meanwhile, the read models catch
			// up only later.
			time.Sleep(300 * time.Millisecond)
			engineDone = make(chan struct{})
			go func() {
				defer close(engineDone)
				_ = p.engine.Run(ctx)
			}()
			eventually(t, "the second turn", func() bool { return p.completed(t, second) })
			reqs := p.provider.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d provider calls, want 2", len(reqs))
			}
			if h := reqs[1].History; len(h) != 0 {
				t.Errorf("the message after the closed conversation continued it: history %+v", h)
			}
			if got := conversationOf(t, p, second); got == conv {
				t.Errorf("the second turn joined the closed conversation %s", conv)
			}
			cancel()
			<-schedDone
			<-engineDone
		})
	}
}

// conversationOf is the conversation a turn's context was built in.
func conversationOf(t *testing.T, p *rig, id string) string {
	t.Helper()
	evs, err := p.store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == (turn.ContextBuilt{}).EventType() {
			pl, err := p.reg.Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			return pl.(turn.ContextBuilt).ConversationID
		}
	}
	t.Fatalf("turn %s built no context", id)
	return ""
}

// appliedCompletion tells whether the turns read model shows the turn
// completed.
func appliedCompletion(t *testing.T, db *sql.DB, id string) bool {
	t.Helper()
	var status string
	err := db.QueryRow("SELECT status FROM turns WHERE turn_id = '" + id + "'").Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return status != "open"
}

// What other streams record for another chat does not hold a turn back:
// a conversation of someone else closed just before the message, the turn
// runs while the read models have not applied that yet.
func TestTurnDoesNotWaitForAnotherChatsStreams(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			p := newPipeline(t, store, db, dialect)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := p.engine.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			schedDone := background(ctx, p.scheduler.Run)
			closed, err := domain.NewEvents(domain.Metadata{Channel: chanName, Sender: "someone-else"},
				turn.ConversationClosed{ConversationID: "c-other", Sender: chanName + "-someone-else", Reason: "idle"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Append(ctx, summary.SummaryStream("c-other"), eventstore.Any, closed...); err != nil {
				t.Fatal(err)
			}
			id := uuid.NewString()
			p.receive(t, id, "hello")
			p.scheduler.Kick(chanName+"-"+senderID, id)
			// The read models are not running: the turn completes without them.
			eventually(t, "the turn, with the read models behind", func() bool { return p.completed(t, id) })
			cancel()
			<-schedDone
		})
	}
}

// A turn whose run panics every time is poisoned after the router's
// retries: MessagePoisoned is recorded, the sender is told in their
// language that something went wrong, the turn completes with status
// error and the sender's next turn runs.
func TestPoisonedTurnIsAbandonedAndTheNextTurnRuns(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			p := newPipeline(t, store, db, dialect)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
				if req.Prompt == "boom" {
					panic("driver bug")
				}
				return providers.Response{Text: "re: " + req.Prompt}, nil
			}
			engineDone, schedDone := background(ctx, p.engine.Run), background(ctx, p.scheduler.Run)

			bad, next := uuid.NewString(), uuid.NewString()
			p.receive(t, bad, "boom")
			p.receive(t, next, "hello")
			p.scheduler.Kick(chanName+"-"+senderID, bad)

			eventually(t, "both turns", func() bool { return p.completed(t, bad) && p.completed(t, next) })
			cancel()
			<-schedDone
			<-engineDone

			poisoned, err := p.store.Load(context.Background(), system.PoisonStream("turns"), 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(poisoned) != 1 || poisoned[0].Type != "MessagePoisoned" || !strings.Contains(string(poisoned[0].Data), bad) {
				t.Fatalf("poison stream %+v, want one MessagePoisoned for turn %s", poisoned, bad)
			}
			evs, err := p.store.Load(context.Background(), domain.TurnStream(bad), 1)
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; !strings.Contains(string(last.Data), `"status":"error"`) {
				t.Errorf("poisoned turn completed with %s, want status error", last.Data)
			}
			// "hello" may be acknowledged as queued while "boom" is retried.
			got := slices.DeleteFunc(p.channel.texts(), func(s string) bool { return s == i18n.Text(lang, i18n.BusyAck) })
			want := []string{i18n.Text(lang, i18n.ErrUnknown), "re: hello"}
			if !slices.Equal(got, want) {
				t.Errorf("sent %q, want %q", got, want)
			}
		})
	}
}

// outageStore refuses reads and appends while down, like a database
// that does not answer, except the poison queue's: as when the database
// comes back between the router's last retry and its poison record, the
// record would get through.
type outageStore struct {
	testStore
	down atomic.Bool
}

var errOutage = errors.New("injected: connection refused")

func (o *outageStore) Load(ctx context.Context, stream string, from int64) ([]domain.Event, error) {
	if o.down.Load() {
		return nil, errOutage
	}
	return o.testStore.Load(ctx, stream, from)
}

func (o *outageStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	if o.down.Load() && !strings.HasPrefix(stream, system.PoisonStream("")) {
		return eventstore.AppendResult{}, errOutage
	}
	return o.testStore.Append(ctx, stream, expected, evs...)
}

// A turn that fails because the database is away is not poisoned, however
// long the outage outlasts the router's retries: the scheduler retries it
// with its own backoff and it completes once the database is back.
func TestTurnFailingInAnOutageIsRetriedNotPoisoned(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			out := &outageStore{testStore: store}
			p := newPipeline(t, out, db, dialect)
			p.driver.Senders = senders.MustNew(out, p.reg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The read models show the set-up (the sender's welcome), which
			// the turn waits for.
			if err := p.engine.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			id := uuid.NewString()
			p.receive(t, id, "hello")
			out.down.Store(true)
			calls := p.provider.requests
			schedDone := background(ctx, p.scheduler.Run)
			p.scheduler.Kick(chanName+"-"+senderID, id)
			// The router would have poisoned it after 10+20 ms of retries.
			time.Sleep(300 * time.Millisecond)
			out.down.Store(false)

			eventually(t, "the turn", func() bool { return p.completed(t, id) })
			cancel()
			<-schedDone
			if poisoned, err := store.Load(context.Background(), system.PoisonStream("turns"), 1); err != nil || len(poisoned) != 0 {
				t.Fatalf("%d MessagePoisoned (%v), want none", len(poisoned), err)
			}
			if got := p.channel.texts(); !slices.Equal(got, []string{"hola"}) || len(calls()) != 1 {
				t.Errorf("sent %q after %d provider calls, want one reply after one call", got, len(calls()))
			}
		})
	}
}

// background runs fn until ctx ends; the channel closes when it returned.
func background(ctx context.Context, fn func(context.Context) error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = fn(ctx)
	}()
	return done
}

// The scheduler reads the turns the driver marked replied; it never sets
// the driver's fields: a driver not built by NewDriver is refused, and is
// left as it was.
func TestSchedulerLeavesTheDriverAsBuilt(t *testing.T) {
	b := storeBackends()[0]
	store, db, dialect := b.open(t, b.dsn(t))
	p := newPipeline(t, store, db, dialect)
	leases, err := lease.New(store, "test-node", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bare := *p.driver
	bare.Replied = nil
	if _, err := scheduling.NewScheduler(scheduling.SchedulerConfig{
		Driver: &bare, Turns: p.turns, Read: bare.Read, Leases: leases, Logger: quiet,
	}); err == nil {
		t.Fatal("a driver without its replied turns was accepted")
	}
	if bare.Replied != nil {
		t.Fatal("the scheduler set the driver's replied turns")
	}
}
