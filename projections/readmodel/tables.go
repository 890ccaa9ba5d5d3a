package readmodel

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math"
)

// TableFunc names a projection's tables under prefix (a rebuild's shadow
// tables, or none).
func TableFunc(prefix string) func(string) string {
	return func(name string) string { return prefix + name }
}

// CreateTables runs a projection's schema in tx.
func CreateTables(ctx context.Context, tx *sql.Tx, d Dialect, p Projection, prefix string) error {
	for _, stmt := range p.Schema(d, TableFunc(prefix)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create tables of %s: %w", p.Name(), err)
		}
	}
	return nil
}

// DropTables drops a projection's tables in tx.
func DropTables(ctx context.Context, tx *sql.Tx, p Projection, prefix string) error {
	for _, t := range p.Tables() {
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+prefix+t); err != nil {
			return fmt.Errorf("drop %s%s: %w", prefix, t, err)
		}
	}
	return nil
}

// FingerprintName is the checkpoint that records the DDL a projection's
// tables were created with (SchemaFingerprint).
func FingerprintName(p Projection) string { return "schema-ddl:" + p.Name() }

// SchemaFingerprint identifies a projection's DDL, so that a change to it
// (an index added without a new version) is noticed.
func SchemaFingerprint(d Dialect, p Projection) int64 {
	h := fnv.New64a()
	for _, stmt := range p.Schema(d, TableFunc("")) {
		_, _ = h.Write([]byte(stmt))
		_, _ = h.Write([]byte{0})
	}
	return int64(h.Sum64() & math.MaxInt64)
}
