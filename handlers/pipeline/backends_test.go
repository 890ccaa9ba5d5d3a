package pipeline_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/handlers/scheduling"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
	"github.com/omega-gateway/omega/prompts"
)

// testStore is what the pipeline needs of a backend: the log with its
// checkpoints and leases.
type testStore interface {
	engine.Log
	eventstore.Leases
}

// storeBackend opens a fresh store of one backend.
type storeBackend struct {
	name string
	open func(t *testing.T, dsn string) (testStore, *sql.DB, readmodel.Dialect)
	dsn  func(t *testing.T) string
}

func storeBackends() []storeBackend {
	return []storeBackend{
		{"sqlite", func(t *testing.T, dsn string) (testStore, *sql.DB, readmodel.Dialect) {
			s, err := sqlite.Open(context.Background(), dsn, sqlite.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s.DB(), readmodel.SQLite
		}, func(t *testing.T) string { return filepath.Join(t.TempDir(), "omega.db") }},
		{"postgres", func(t *testing.T, dsn string) (testStore, *sql.DB, readmodel.Dialect) {
			s, err := postgres.Open(context.Background(), dsn, postgres.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s.DB(), readmodel.Postgres
		}, func(t *testing.T) string { return pgtest.DSN(t) }},
	}
}

// rig is a driver and scheduler over one store, with the turns read
// model set up but not followed until follow is called.
type rig struct {
	store     eventstore.Store
	reg       *domain.Registry
	engine    *engine.Engine
	channel   *fakeChannel
	provider  *fakeProvider
	driver    *pipeline.Driver
	scheduler *scheduling.Scheduler
	turns     *messaging.Turns
	awaits    atomic.Int64 // the scheduler's waits for the read models
}

// startTurns runs a router with the turn handler, retrying a failed turn
// twice before poisoning it. The handler runs p.driver's Run through a
// closure, so that a test may swap the driver's collaborators.
func startTurns(t *testing.T, store testStore, db *sql.DB, dialect readmodel.Dialect, reg *domain.Registry, d *pipeline.Driver) *messaging.Turns {
	t.Helper()
	backend := "sqlite"
	if dialect == readmodel.Postgres {
		backend = "postgres"
	}
	buses, err := messaging.New(messaging.Options{Backend: backend, DB: db, Log: store, Registry: reg, Logger: quiet,
		MaxRetries: 2, InitialInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := buses.AddTurnHandler(func(ctx context.Context, id string) error { return d.Run(ctx, id) },
		func(ctx context.Context, id string, err error) bool { return d.Transient(ctx, id, err) })
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = buses.Router.Run(context.Background())
	}()
	<-buses.Router.Running()
	t.Cleanup(func() {
		_ = buses.Router.Close()
		<-done
		_ = buses.Close()
	})
	return turns
}

func newPipeline(t *testing.T, store testStore, db *sql.DB, dialect readmodel.Dialect) *rig {
	t.Helper()
	ctx := context.Background()
	reg := events.NewRegistry()
	engine := engine.New(db, store, dialect, reg, quiet, facts.ReadModel{}, projections.Turns{}, projections.Sessions{}, tasks.ReadModel{}, projections.Summaries{})
	if err := engine.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ps, err := prompts.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &rig{store: store, reg: reg, engine: engine, channel: &fakeChannel{}, provider: &fakeProvider{}}
	texts, err := promptstore.New(store, reg)
	if err != nil {
		t.Fatal(err)
	}
	p.driver, err = pipeline.NewDriver(pipeline.Driver{
		PromptTexts: texts,
		Store:       store, Registry: reg,
		Senders:  senders.MustNew(store, reg),
		Read:     queries(t, db, dialect),
		Channels: p.channel, Provider: p.provider, Prompts: ps,
		Config: pipeline.DriverConfig{
			ModelFast: "fast", Workspace: dir, ConversationIdle: time.Hour, Location: time.UTC, HistoryLimit: 10,
		},
		Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	leases, err := lease.New(store, "test-node", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.turns = startTurns(t, store, db, dialect, reg, p.driver)
	p.scheduler, err = scheduling.NewScheduler(scheduling.SchedulerConfig{
		Driver: p.driver, Turns: p.turns, Read: p.driver.Read, Channels: []string{chanName}, Logger: quiet,
		Leases:  leases,
		Applied: engine.Applied,
		Await: func() func() {
			p.awaits.Add(1)
			return engine.Await()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	welcomed, err := domain.NewEvents(domain.Metadata{Channel: chanName, Sender: senderID}, sender.Welcomed{Name: "Ana", Language: lang})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, sender.SenderStream(chanName, senderID), eventstore.NoStream, welcomed...); err != nil {
		t.Fatal(err)
	}
	return p
}

// receive records a message as a gateway (of any process) would.
func (p *rig) receive(t *testing.T, id, text string) {
	t.Helper()
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id, Channel: chanName, Sender: senderID}, message(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.store.Append(context.Background(), domain.TurnStream(id), eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
}

func (p *rig) completed(t *testing.T, id string) bool {
	t.Helper()
	evs, err := p.store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == "TurnCompleted"
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func queries(t testing.TB, db *sql.DB, d readmodel.Dialect) *projections.Queries {
	t.Helper()
	q, err := projections.NewQueries(db, d)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
