// Package app opens omega's storage and read models from a configuration:
// the one place that knows which backend implements the event store.
package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/migrations"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/providercalls"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/recall"
	"github.com/omega-gateway/omega/projections/reports"
	"github.com/omega-gateway/omega/projections/tasks"
)

// Store is the event log with consumer checkpoints and leases. It hands
// out no database handle: read models are asked through Queries.
type Store interface {
	eventstore.Store
	eventstore.Checkpoints
	eventstore.TxCheckpoints
	eventstore.Leases
	// The shared reader of the end of the log and the stream cache are
	// part of the contract, so that a wrapper (serve's timed store) hands
	// them on by embedding instead of hiding them from eventstore.Follow.
	eventstore.CachedLoader
	Tail() *eventstore.Tail
}

// backend is a store with its database handles, which only app passes on:
// to the projection engine and the read-model queries (the owners of the
// tables), to migrations, and to libraries that keep their own tables
// (watermill-sql, whatsmeow's device store).
type backend interface {
	Store
	// DB is the handle to write read models with (on SQLite the single
	// writer connection); ReadDB is for queries only (on SQLite a pool of
	// readers, so queries do not wait behind appends).
	DB() *sql.DB
	ReadDB() *sql.DB
}

// App holds the opened storage.
type App struct {
	Config   config.Config
	Logger   *slog.Logger
	Store    Store
	Dialect  readmodel.Dialect
	Registry *domain.Registry
	Engine   *engine.Engine
	// Queries reads the read models.
	Queries *projections.Queries
	// Reports lists the agent's bug reports and limitations.
	Reports *reports.Queries
	// Audit queries the audit of completed turns.
	Audit *auditlog.Queries
	// Recall searches the full-text index of every conversation.
	Recall *recall.Index
	// Calls queries every provider call: the spend ledger and usage reports.
	Calls *providercalls.Queries
	// Senders changes sender profiles; Effects records marker and command
	// effects and handles the task commands.
	Senders senders.Service
	Effects effects.Recorder
	// PromptTexts records turns' prompts by reference and resolves them.
	PromptTexts *promptstore.Store

	backend backend
}

// OpenOptions tunes Open.
type OpenOptions struct {
	// SkipMigrate opens the store without touching its schema.
	SkipMigrate bool
	// MustExist is for commands that only read: where no omega data exists
	// yet, Open creates nothing and returns ErrNoData.
	MustExist bool
}

// ErrNoData is Open's answer, under MustExist, where omega has never run
// (no SQLite file; a PostgreSQL database, the operator's to create,
// without omega's schema): reading would only create an empty one.
var ErrNoData = errors.New("no omega data")

// Open opens the configured store, applying migrations, and prepares the
// projection engine (without running it).
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger, opts OpenOptions) (*App, error) {
	a := &App{Config: cfg, Logger: logger, Registry: NewRegistry()}
	if cfg.DatabaseURL != "" {
		s, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{Logger: logger, SkipMigrate: opts.SkipMigrate, Versions: a.Registry.Stamps(),
			MustExist: opts.MustExist})
		if errors.Is(err, postgres.ErrNoSchema) {
			return nil, fmt.Errorf("%w in %s: run omega serve first", ErrNoData, WhereOf(cfg))
		}
		if err != nil {
			return nil, err
		}
		a.backend, a.Dialect = s, readmodel.Postgres
	} else {
		if _, err := os.Stat(cfg.SQLitePath()); opts.MustExist && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s: run omega serve first", ErrNoData, cfg.DataDir)
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
		}
		s, err := sqlite.Open(ctx, cfg.SQLitePath(), sqlite.Options{Logger: logger, SkipMigrate: opts.SkipMigrate, Versions: a.Registry.Stamps()})
		if err != nil {
			return nil, err
		}
		a.backend, a.Dialect = s, readmodel.SQLite
	}
	a.Store = a.backend
	a.Engine = engine.New(a.backend.DB(), a.backend, a.Dialect, a.Registry, logger, Projections()...)
	if a.Dialect == readmodel.Postgres {
		// Processes sharing the database share the read models: one
		// applies each, the others read it.
		if err := a.Engine.ApplyExclusively(cfg.ApplierTTL); err != nil {
			_ = a.backend.Close()
			return nil, err
		}
		// Only an applier needs the others' events the moment they
		// commit, and only while a follower here waits for its read models.
		if t := a.backend.Tail(); t != nil {
			t.SetUrgent(a.Engine.Urgent)
			a.Engine.OnAwait(t.Hurry)
			t.SetAwaited(awaitedHere)
		}
	}
	if err := a.openQueries(); err != nil {
		_ = a.backend.Close()
		return nil, err
	}
	var err error
	if a.Senders, err = senders.New(a.Store, a.Registry); err != nil {
		_ = a.backend.Close()
		return nil, err
	}
	if a.Effects, err = effects.New(a.Store, a.Registry, a.Queries); err != nil {
		_ = a.backend.Close()
		return nil, err
	}
	if a.PromptTexts, err = promptstore.New(a.Store, a.Registry); err != nil {
		_ = a.backend.Close()
		return nil, err
	}
	return a, nil
}

// openQueries opens the read side: the read models' queries, on the
// read handle.
func (a *App) openQueries() error {
	db := a.backend.ReadDB()
	var err error
	if a.Queries, err = projections.NewQueries(db, a.Dialect); err != nil {
		return err
	}
	if a.Reports, err = reports.NewQueries(db); err != nil {
		return err
	}
	if err = a.openAuditQueries(); err != nil {
		return err
	}
	a.Recall, err = recall.NewIndex(db, a.Dialect)
	return err
}

// awaitedHere selects the events of this process's own appends that its
// followers wait for in the log: the scheduler orders a message it was
// kicked for there. (A request waiting for its turn's reply sees a turn
// completed here in the store's memory.) The other appends of a turn come
// with the next read of the log.
func awaitedHere(e domain.Event) bool {
	return e.Type == (turn.MessageReceived{}).EventType()
}

// Where describes where the data lives, for logs (never with a password).
func (a *App) Where() string { return WhereOf(a.Config) }

// WhereOf is Where for a configuration, before anything is opened.
func WhereOf(cfg config.Config) string {
	if cfg.DatabaseURL != "" {
		return "postgres " + postgres.Redact(cfg.DatabaseURL)
	}
	return "sqlite " + cfg.SQLitePath()
}

// MigrationStatus returns the schema version the database is at and the
// latest one this binary knows.
func (a *App) MigrationStatus(ctx context.Context) (current, latest int64, err error) {
	return migrations.Status(ctx, a.backend.DB(), migrations.Dialect(a.Dialect))
}

// Close closes the store.
func (a *App) Close() error { return a.Store.Close() }

// NewRegistry returns a registry of every event type omega writes.
func NewRegistry() *domain.Registry { return events.NewRegistry() }

// Projections lists every read model.
func Projections() []readmodel.Projection {
	return []readmodel.Projection{facts.ReadModel{}, projections.Turns{}, projections.Sessions{},
		tasks.ReadModel{}, projections.Summaries{}, reports.ReadModel{}, providercalls.ReadModel{},
		recall.ReadModel{}}
}

// ChannelEnv is what channels are built and checked with: the logger and
// the database a channel library may keep tables in.
func (a *App) ChannelEnv(logger *slog.Logger) channels.Env {
	return channels.Env{Logger: logger, DB: a.backend.DB(), Dialect: string(a.Dialect)}
}
