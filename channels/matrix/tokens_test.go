package matrix

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/omega-gateway/omega/internal/pgtest"
)

// The sync position survives in omega's database, per account, on both
// backends; opening the table twice (a restart) keeps it.
func TestTokensInOmegasDatabase(t *testing.T) {
	for _, tc := range []struct {
		dialect, driver string
		dsn             func(t *testing.T) string
	}{
		{"sqlite", "sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "omega.db") }},
		{"postgres", "postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			db, err := sql.Open(tc.driver, tc.dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			store, err := openTokens(t.Context(), db, tc.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := store.load(t.Context(), "@omega:example.org"); err != nil || got != "" {
				t.Fatalf("empty store: %q, %v", got, err)
			}
			for _, next := range []string{"s1_2_3", "s9_8_7"} {
				if err := store.save(t.Context(), "@omega:example.org", next); err != nil {
					t.Fatal(err)
				}
			}
			if err := store.save(t.Context(), "@other:example.org", "s0"); err != nil {
				t.Fatal(err)
			}
			again, err := openTokens(t.Context(), db, tc.dialect)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := again.load(t.Context(), "@omega:example.org"); err != nil || got != "s9_8_7" {
				t.Fatalf("after reopening: %q, %v", got, err)
			}
		})
	}
	if _, err := openTokens(t.Context(), nil, "mysql"); err == nil {
		t.Fatal("an unknown dialect was accepted")
	}
}
