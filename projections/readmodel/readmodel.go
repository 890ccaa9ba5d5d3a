// Package readmodel is the contract between a read model and the engine
// that feeds it (projections/engine): what a projection declares (name,
// tables, schema, version), the transaction it writes in, and the SQL
// dialect. Read models and the engine both depend on it, never on each
// other.
package readmodel

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/domain"
)

// Dialect names the SQL flavour of the database a projection writes to.
type Dialect string

const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// Projection is one read model.
type Projection interface {
	// Name identifies the projection and its checkpoint.
	Name() string
	// Tables lists the logical names of the tables the projection owns.
	Tables() []string
	// Schema returns the statements that create the tables, using t to turn
	// a logical table name into the physical one (live or shadow).
	Schema(d Dialect, t func(string) string) []string
	// Apply applies one event. It is called for every event in the log, in
	// delivery order; it ignores the types it does not handle.
	Apply(ctx context.Context, tx *Tx, e domain.Event) error
}

// Tx is the transaction a projection writes in, plus the mapping from
// logical to physical table names that lets the same code fill shadow
// tables during verification.
type Tx struct {
	*sql.Tx
	Dialect  Dialect
	Registry *domain.Registry
	prefix   string
	stmts    *Statements
}

// NewTx wraps tx for a projection's Apply: prefix names the physical
// tables ("" for the live ones, the shadow prefix during verification),
// stmts (nil for none) prepares statements once.
func NewTx(tx *sql.Tx, d Dialect, reg *domain.Registry, prefix string, stmts *Statements) *Tx {
	return &Tx{Tx: tx, Dialect: d, Registry: reg, prefix: prefix, stmts: stmts}
}

// ExecContext runs a statement with storable arguments (see storable),
// prepared once where that pays (see Statements).
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmts.InTx(ctx, tx.Tx, query); st != nil {
		return st.ExecContext(ctx, storable(args)...)
	}
	return tx.Tx.ExecContext(ctx, query, storable(args)...)
}

// QueryContext runs a query with storable arguments (see storable).
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmts.InTx(ctx, tx.Tx, query); st != nil {
		return st.QueryContext(ctx, storable(args)...)
	}
	return tx.Tx.QueryContext(ctx, query, storable(args)...)
}

// QueryRowContext runs a query with storable arguments (see storable).
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.stmts.InTx(ctx, tx.Tx, query); st != nil {
		return st.QueryRowContext(ctx, storable(args)...)
	}
	return tx.Tx.QueryRowContext(ctx, query, storable(args)...)
}

// storable replaces NUL in string arguments with U+FFFD: PostgreSQL text
// cannot hold NUL, and an event from before intake validation (or from a
// provider) may. Both backends store the same value, so a read model is
// identical on either and a rebuild gives what the live model holds.
func storable(args []any) []any {
	out := args
	for i, a := range args {
		s, ok := a.(string)
		if !ok || strings.IndexByte(s, 0) < 0 {
			continue
		}
		if &out[0] == &args[0] {
			out = slices.Clone(args)
		}
		out[i] = Storable(s)
	}
	return out
}

// Storable is a text as both backends keep it: NUL replaced with U+FFFD
// (see storable). Statements that carry rows in one JSON parameter apply
// it to each text themselves.
func Storable(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// T returns the physical name of a logical table.
func (tx *Tx) T(name string) string { return tx.prefix + name }

// Decode returns an event's typed payload, upcast to its current shape.
func (tx *Tx) Decode(e domain.Event) (domain.Payload, error) {
	p, err := tx.Registry.Decode(e)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// CheckpointName is the checkpoint under which the engine records how far
// p has applied the log; queries that must agree with a read model read it.
func CheckpointName(p Projection) string { return "projection:" + p.Name() }
