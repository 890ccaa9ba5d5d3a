package engine

import (
	"context"
	"database/sql"
	"fmt"

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
