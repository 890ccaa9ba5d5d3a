package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/migrations"
)

func TestUp(t *testing.T) {
	cases := []struct {
		dialect migrations.Dialect
		open    func(t *testing.T) (*sql.DB, migrations.Options)
	}{
		{migrations.SQLite, func(t *testing.T) (*sql.DB, migrations.Options) {
			path := filepath.Join(t.TempDir(), "m.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db, migrations.Options{LockFile: path + ".migrate.lock"}
		}},
		{migrations.Postgres, func(t *testing.T) (*sql.DB, migrations.Options) {
			db, err := sql.Open("postgres", pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db, migrations.Options{}
		}},
	}
	for _, c := range cases {
		t.Run(string(c.dialect), func(t *testing.T) {
			ctx := context.Background()
			db, opts := c.open(t)
			// Several processes starting at once must all succeed.
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- migrations.Up(ctx, db, c.dialect, opts)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("concurrent Up: %v", err)
				}
			}
			current, latest, err := migrations.Status(ctx, db, c.dialect)
			if err != nil || current != latest || latest < 2 || migrations.Newest(c.dialect) != latest {
				t.Fatalf("status = %d/%d, %v; newest embedded %d", current, latest, err, migrations.Newest(c.dialect))
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO omega_schema_migrations (version_id, is_applied) VALUES (9999, true)`); err != nil {
				t.Fatal(err)
			}
			err = migrations.Up(ctx, db, c.dialect, opts)
			if !errors.Is(err, migrations.ErrSchemaTooNew) {
				t.Fatalf("Up on a newer schema = %v, want ErrSchemaTooNew", err)
			}
		})
	}
}
