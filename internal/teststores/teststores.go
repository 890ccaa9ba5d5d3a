// Package teststores opens an empty event store on each backend for tests
// that run against both: SQLite in a temporary directory and PostgreSQL in
// a fresh schema (internal/pgtest), each closed when the test ends.
package teststores

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// Backend names a backend and opens an empty store on it.
type Backend struct {
	Name string
	Open func(t *testing.T) eventstore.Store
}

var quiet = slog.New(slog.DiscardHandler)

// All returns SQLite then PostgreSQL. PostgreSQL is skipped when no server
// answers, unless OMEGA_TEST_REQUIRE_POSTGRES=1 (see pgtest.DSN).
func All() []Backend {
	return []Backend{
		{"sqlite", func(t *testing.T) eventstore.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
		{"postgres", func(t *testing.T) eventstore.Store {
			s, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
	}
}
