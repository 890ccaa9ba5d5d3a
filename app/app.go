// Package app opens omega's storage and read models from a configuration:
// the one place that knows which backend implements the event store.
package app

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"

	"github.com/omega-gateway/omega/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/projections"
)

// Store is the event log with consumer checkpoints.
type Store interface {
	eventstore.Store
	eventstore.Checkpoints
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
	Dialect  projections.Dialect
	Registry *domain.Registry
	Engine   *projections.Engine
}

// OpenOptions tunes Open.
type OpenOptions struct {
	// SkipMigrate opens the store without touching its schema.
	SkipMigrate bool
}

// Open opens the configured store, applying migrations, and prepares the
// projection engine (without running it).
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger, opts OpenOptions) (*App, error) {
	a := &App{Config: cfg, Logger: logger, Registry: NewRegistry()}
	if cfg.DatabaseURL != "" {
		s, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{Logger: logger, SkipMigrate: opts.SkipMigrate})
		if err != nil {
			return nil, err
		}
		a.Store, a.Dialect = s, projections.Postgres
	} else {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
		}
		s, err := sqlite.Open(ctx, cfg.SQLitePath(), sqlite.Options{Logger: logger, SkipMigrate: opts.SkipMigrate})
		if err != nil {
			return nil, err
		}
		a.Store, a.Dialect = s, projections.SQLite
	}
	a.Engine = projections.New(a.Store.DB(), a.Store, a.Dialect, a.Registry, logger, Projections()...)
	return a, nil
}

// Where describes where the data lives, for logs (never with a password).
func (a *App) Where() string {
	if a.Config.DatabaseURL != "" {
		return "postgres " + postgres.Redact(a.Config.DatabaseURL)
	}
	return "sqlite " + a.Config.SQLitePath()
}

// Close closes the store.
func (a *App) Close() error { return a.Store.Close() }

// NewRegistry returns a registry of every event type omega writes.
func NewRegistry() *domain.Registry {
	r := domain.NewRegistry()
	domain.RegisterSystemEvents(r)
	domain.RegisterSenderEvents(r)
	domain.RegisterTurnEvents(r)
	domain.RegisterWhatsAppEvents(r)
	domain.RegisterTaskEvents(r)
	domain.RegisterAgentEvents(r)
	return r
}

// Projections lists every read model.
func Projections() []projections.Projection {
	return []projections.Projection{projections.Facts{}, projections.Turns{}, projections.Sessions{},
		projections.Tasks{}}
}
