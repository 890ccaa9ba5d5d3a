// Package pgtest gives tests their own empty PostgreSQL schema.
//
// Each call to DSN creates a schema named omega_t_<random> in the test
// database and returns a DSN whose connections use it (lib/pq sends unknown
// DSN keys such as search_path as run-time parameters), so tests can run in
// parallel against one server without seeing each other's tables.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // registers the "postgres" driver
)

const (
	// EnvURL overrides the base DSN of the test database.
	EnvURL = "OMEGA_TEST_DATABASE_URL"
	// EnvRequire turns a missing server into a test failure instead of a skip.
	EnvRequire = "OMEGA_TEST_REQUIRE_POSTGRES"
	// DefaultURL is used when EnvURL is unset.
	DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// DSN returns a DSN for a fresh, empty schema that is dropped when the test
// ends. It skips the test when no server answers, unless
// OMEGA_TEST_REQUIRE_POSTGRES=1.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		base = DefaultURL
	}
	db, err := sql.Open("postgres", base)
	if err != nil {
		unavailable(t, fmt.Errorf("open %s: %w", redact(base), err))
	}
	defer db.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		unavailable(t, fmt.Errorf("connect to %s: %w", redact(base), err))
	}

	schema := "omega_t_" + randomSuffix(t)
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() { dropSchema(t, base, schema) })

	dsn, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("pgtest: PostgreSQL is required (%s=1) but unavailable: %v", EnvRequire, err)
	}
	t.Skipf("pgtest: PostgreSQL unavailable, skipping (set %s to a reachable server, or %s=1 to fail): %v", EnvURL, EnvRequire, err)
}

func dropSchema(t testing.TB, base, schema string) {
	db, err := sql.Open("postgres", base)
	if err != nil {
		t.Errorf("pgtest: drop schema %s: %v", schema, err)
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
		t.Errorf("pgtest: drop schema %s: %v", schema, err)
	}
}

// withSearchPath adds search_path to a URL or key=value DSN.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: invalid URL", EnvURL)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

func randomSuffix(t testing.TB) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("pgtest: random schema name: %v", err)
	}
	return hex.EncodeToString(b[:])
}

// redact hides a password in a URL DSN; key=value DSNs are not shown at all.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "the test database"
	}
	return u.Redacted()
}
