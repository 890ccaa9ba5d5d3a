package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// projectionSchemaLock is the engine's database-wide lock for DDL.
const projectionSchemaLock = 0x6f6d6567612d70

// appliedIndexed is applied{} whose DDL gained an index without a new
// version.
type appliedIndexed struct{ applied }

func (appliedIndexed) Schema(d readmodel.Dialect, t func(string) string) []string {
	return append(applied{}.Schema(d, t), fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (type)", t("applied_by_type"), t("applied")))
}

// A process joining read models that are set up already is ready while
// another session holds the schema lock (another process setting up): it
// only reads what was recorded. A projection whose DDL changed takes the
// lock and runs it.
func TestSetupSkipsTheLockWhenCurrent(t *testing.T) {
	open := backends()[1].Open(t)
	ctx := context.Background()
	s := open()
	if err := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, applied{}, appliedToo{}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", projectionSchemaLock); err != nil {
		t.Fatal(err)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", projectionSchemaLock); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer unlock()

	joining := open()
	setup := func(d time.Duration, ps ...readmodel.Projection) error {
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return engine.New(joining.DB(), joining, readmodel.Postgres, registry(), quiet, ps...).Setup(c)
	}
	started := time.Now()
	if err := setup(time.Second, applied{}, appliedToo{}); err != nil {
		t.Fatalf("setting up current read models waited for the schema lock: %v", err)
	}
	t.Logf("set up current read models in %s while the schema lock was held", time.Since(started))

	if err := setup(300*time.Millisecond, appliedIndexed{}, appliedToo{}); err == nil {
		t.Fatal("a changed DDL was taken for current without the schema lock")
	}
	unlock()
	if err := setup(10*time.Second, appliedIndexed{}, appliedToo{}); err != nil {
		t.Fatal(err)
	}
	var indexes int
	if err := joining.DB().QueryRow(`SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'applied_by_type'`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 1 {
		t.Fatalf("the changed DDL's index exists %d times, want once", indexes)
	}
	if err := setup(time.Second, appliedIndexed{}, appliedToo{}); err != nil {
		t.Fatal(err)
	}
}
