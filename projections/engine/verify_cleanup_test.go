package engine_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// cancelOnProgress interrupts a run at its first progress report, as a
// Ctrl-C in the middle of `omega replay --verify` would.
type cancelOnProgress struct{ cancel context.CancelFunc }

func (c cancelOnProgress) Start(string, int64) {}
func (c cancelOnProgress) Add(int64)           { c.cancel() }
func (c cancelOnProgress) Finish()             {}

// shadows counts what a verify leaves behind: verify_* tables and
// checkpoints.
func shadows(t *testing.T, db *sql.DB, dialect readmodel.Dialect) int {
	t.Helper()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'verify\_%' ESCAPE '\'`
	if dialect == readmodel.Postgres {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'verify\_%' ESCAPE '\'`
	}
	var tables, checkpoints int
	if err := db.QueryRow(q).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM checkpoints WHERE name LIKE 'verify\_%' ESCAPE '\'`).Scan(&checkpoints); err != nil {
		t.Fatal(err)
	}
	return tables + checkpoints
}

func TestVerifyLeavesNoShadowTables(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)()
			eng := engine.New(s.DB(), s, b.Dialect, registry(), quiet, facts.ReadModel{}, applied{})
			ctx := context.Background()
			if err := eng.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			appendFacts(t, s, 40, "1")
			if err := eng.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			ps, _ := eng.Select("facts")

			if diffs, err := eng.Verify(ctx, ps, nil); err != nil || len(diffs) != 0 {
				t.Fatalf("verify: %v %v", diffs, err)
			}
			if n := shadows(t, s.DB(), b.Dialect); n != 0 {
				t.Fatalf("a clean verify left %d shadow table(s) or checkpoint(s)", n)
			}

			ictx, cancel := context.WithCancel(ctx)
			if _, err := eng.Verify(ictx, ps, cancelOnProgress{cancel}); err == nil {
				t.Fatal("an interrupted verify reported success")
			}
			if n := shadows(t, s.DB(), b.Dialect); n != 0 {
				t.Fatalf("an interrupted verify left %d shadow table(s) or checkpoint(s)", n)
			}

			// A failure after the shadow tables exist: the live table is gone.
			if _, err := s.DB().Exec("DROP TABLE facts"); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Verify(ctx, ps, nil); err == nil {
				t.Fatal("verify without the live table reported success")
			}
			if n := shadows(t, s.DB(), b.Dialect); n != 0 {
				t.Fatalf("a failed verify left %d shadow table(s) or checkpoint(s)", n)
			}
		})
	}
}
