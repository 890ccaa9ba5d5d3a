package pipeline_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/providers"
)

// holdStore holds back the append that completes one turn until released,
// so that the moment between a reply going out and its turn's completion
// being recorded lasts as long as a test needs. It reports the first
// AckSent appended anywhere.
type holdStore struct {
	testStore
	turn     string
	holding  chan struct{} // closed when the completion append is held
	release  chan struct{} // close to let it through
	acked    chan struct{} // closed at the first AckSent
	holdOnce sync.Once
	ackOnce  sync.Once
}

func (h *holdStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	for _, e := range evs {
		switch {
		case e.Type == turn.AckSent{}.EventType():
			h.ackOnce.Do(func() { close(h.acked) })
		case e.Type == turn.TurnCompleted{}.EventType() && stream == domain.TurnStream(h.turn):
			h.holdOnce.Do(func() { close(h.holding) })
			select {
			case <-h.release:
			case <-ctx.Done():
				return eventstore.AppendResult{}, ctx.Err()
			}
		}
	}
	return h.testStore.Append(ctx, stream, expected, evs...)
}

// signalHandler closes seen at the first record with message msg.
type signalHandler struct {
	msg  string
	seen chan struct{}
	once *sync.Once
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// A message that arrives after the previous turn's reply went out but
// before that turn's completion is recorded is not queued behind anything:
// it is never acknowledged. The completion of the first turn is held back
// until the scheduler has decided about the second message (acknowledged
// it, or logged that it would not), so the window is there every run.
func TestNoAckForMessageAfterTheReplyBeforeTheCompletion(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			first, second := uuid.NewString(), uuid.NewString()
			hold := &holdStore{testStore: store, turn: first,
				holding: make(chan struct{}), release: make(chan struct{}), acked: make(chan struct{})}
			p := newPipeline(t, hold, db, dialect)
			p.driver.Senders = senders.MustNew(hold, p.reg)
			p.provider.reply = func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
				return providers.Response{Text: "re: " + req.Prompt}, nil
			}
			decided := signalHandler{msg: "scheduler: message after the reply; not acknowledged", seen: make(chan struct{}), once: &sync.Once{}}
			leases, err := lease.New(hold, "race-node", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			sched, err := scheduling.NewScheduler(scheduling.SchedulerConfig{
				Driver: p.driver, Turns: p.turns, Read: p.driver.Read, Channels: []string{chanName},
				Logger: slog.New(decided), Leases: leases, Applied: p.engine.Applied,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			engineDone, schedDone := background(ctx, p.engine.Run), background(ctx, sched.Run)

			p.receive(t, first, "first")
			sched.Kick(chanName+"-"+senderID, first)
			waitClosed(t, "the first turn's completion to be held", hold.holding)
			if got := p.channel.texts(); !slices.Equal(got, []string{"re: first"}) {
				t.Fatalf("sent %q before the completion, want the first reply", got)
			}
			// The sender read the reply and writes again at once.
			p.receive(t, second, "second")
			sched.Kick(chanName+"-"+senderID, second)
			select {
			case <-hold.acked:
			case <-decided.seen:
			case <-time.After(30 * time.Second):
				t.Fatal("the scheduler decided nothing about the second message")
			}
			close(hold.release)

			eventually(t, "both turns", func() bool { return p.completed(t, first) && p.completed(t, second) })
			cancel()
			<-schedDone
			<-engineDone
			if got, want := p.channel.texts(), []string{"re: first", "re: second"}; !slices.Equal(got, want) {
				t.Errorf("sent %q, want %q (no %q)", got, want, i18n.Text(lang, i18n.BusyAck))
			}
			for _, e := range turnStream(t, p, second) {
				if e.Type == (turn.AckSent{}).EventType() {
					t.Errorf("second turn recorded %s", e.Type)
				}
			}
		})
	}
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func turnStream(t *testing.T, p *rig, id string) []domain.Event {
	t.Helper()
	evs, err := p.store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
