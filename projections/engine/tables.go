package engine

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/omega-gateway/omega/projections/readmodel"
)

func tableFunc(prefix string) func(string) string {
	return func(name string) string { return prefix + name }
}

// createTables runs a projection's schema in tx.
func createTables(ctx context.Context, tx *sql.Tx, d readmodel.Dialect, p readmodel.Projection, prefix string) error {
	for _, stmt := range p.Schema(d, tableFunc(prefix)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create tables of %s: %w", p.Name(), err)
		}
	}
	return nil
}

func dropTables(ctx context.Context, tx *sql.Tx, p readmodel.Projection, prefix string) error {
	for _, t := range p.Tables() {
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+prefix+t); err != nil {
			return fmt.Errorf("drop %s%s: %w", prefix, t, err)
		}
	}
	return nil
}

func fingerprintName(p readmodel.Projection) string { return "schema-ddl:" + p.Name() }

// schemaFingerprint identifies the DDL a projection's tables were created
// with, so that a change to it (an index added without a new version)
// still makes Setup run it.
func schemaFingerprint(d readmodel.Dialect, p readmodel.Projection) int64 {
	h := fnv.New64a()
	for _, stmt := range p.Schema(d, tableFunc("")) {
		_, _ = h.Write([]byte(stmt))
		_, _ = h.Write([]byte{0})
	}
	return int64(h.Sum64() & math.MaxInt64)
}

// schemaCurrent reports whether every projection's tables were set up by
// this code: its recorded version and DDL fingerprint are this code's.
// It reads without the schema lock; any doubt (an error) answers false,
// and Setup then takes the lock and looks again.
func (e *Engine) schemaCurrent(ctx context.Context) bool {
	for _, p := range e.projections {
		v, err := e.store.Checkpoint(ctx, schemaName(p))
		if err != nil || v != schemaVersion(p) {
			return false
		}
		f, err := e.store.Checkpoint(ctx, fingerprintName(p))
		if err != nil || f != schemaFingerprint(e.dialect, p) {
			return false
		}
	}
	return true
}
