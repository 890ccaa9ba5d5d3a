// Package projections holds omega's read models and their queries: each
// read model (turns, facts, tasks, summaries, sessions, reports, provider
// calls) declares its tables and applies the events it reads, and Queries
// is the only reader of those tables, so a changed table shape is this
// package's business. The engine that feeds them is projections/engine,
// the contract between the two projections/readmodel, the audit's
// queries projections/auditlog.
package projections

import (
	"database/sql"
	"log/slog"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// The engine's and the dialect's names are answered here as well, so that
// a package that wires read models and reads them (the turn pipeline's
// tests) needs this one import.
type (
	// Engine is engine.Engine.
	Engine = engine.Engine
	// Log is engine.Log.
	Log = engine.Log
	// Dialect is readmodel.Dialect.
	Dialect = readmodel.Dialect
)

// The dialects (readmodel.Postgres, readmodel.SQLite).
const (
	Postgres = readmodel.Postgres
	SQLite   = readmodel.SQLite
)

// New is engine.New.
func New(db *sql.DB, store Log, d Dialect, reg *domain.Registry, logger *slog.Logger, ps ...readmodel.Projection) *Engine {
	return engine.New(db, store, d, reg, logger, ps...)
}
