// Package projectionstest opens an event store on each backend for the
// tests of the read models, their engine and their queries: SQLite in a
// temporary directory and PostgreSQL in a fresh schema (internal/pgtest).
package projectionstest

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Store is an event store with the checkpoints the engine keeps and the
// database the read models live in.
type Store interface {
	engine.Log
	DB() *sql.DB
}

// Backend names a backend and its dialect.
type Backend struct {
	Name    string
	Dialect readmodel.Dialect
	Open    func(t testing.TB) func() Store // returns an opener for the same database
}

// Quiet discards what the stores and engines log.
var Quiet = slog.New(slog.DiscardHandler)

// Backends returns SQLite then PostgreSQL. PostgreSQL is skipped when no
// server answers, unless OMEGA_TEST_REQUIRE_POSTGRES=1 (see pgtest.DSN).
func Backends() []Backend {
	return []Backend{
		{"sqlite", readmodel.SQLite, func(t testing.TB) func() Store {
			path := t.TempDir() + "/omega.db"
			return func() Store {
				s, err := sqlite.Open(context.Background(), path, sqlite.Options{Logger: Quiet})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		}},
		{"postgres", readmodel.Postgres, func(t testing.TB) func() Store {
			dsn := pgtest.DSN(t)
			return func() Store {
				s, err := postgres.Open(context.Background(), dsn, postgres.Options{Logger: Quiet})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		}},
	}
}

// TurnsRegistry is the registry the tests of the turns read model decode with.
func TurnsRegistry() *domain.Registry {
	r := events.NewRegistry()
	turn.RegisterEvents(r)
	return r
}
