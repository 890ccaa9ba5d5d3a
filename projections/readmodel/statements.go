package readmodel

import (
	"context"
	"database/sql"
	"sync"
)

// Statements prepares each distinct statement text once and reuses it. On
// PostgreSQL a statement sent unprepared is parsed and planned on every
// call: for the turns projection's statements that was 0.3–0.8 ms of
// server time each (the server's statement log, parse and bind against
// execute), more than executing them. A prepared one is only bound and
// executed. database/sql prepares it again on each connection that runs
// it, once.
//
// Only PostgreSQL uses it: SQLite prepares in-process for next to nothing,
// and its single write connection is held by the transaction that would
// have to wait for the prepare.
type Statements struct {
	db *sql.DB

	mu     sync.Mutex
	byText map[string]*sql.Stmt
}

// maxStatements bounds the texts kept: read-model SQL comes from a fixed
// set of templates, but filters (the audit's) build texts of their own.
const maxStatements = 256

// NewStatements returns the statement cache for db: nil (no cache) on
// anything but PostgreSQL.
func NewStatements(db *sql.DB, d Dialect) *Statements {
	if d != Postgres {
		return nil
	}
	return &Statements{db: db, byText: map[string]*sql.Stmt{}}
}

// Get returns the prepared statement for query, or nil when it is not kept
// (no cache, the cache full, or the prepare failed: the caller then runs
// the text, which reports any error itself).
func (s *Statements) Get(ctx context.Context, query string) *sql.Stmt {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	st, ok := s.byText[query]
	full := len(s.byText) >= maxStatements
	s.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if had, ok := s.byText[query]; ok { // prepared meanwhile by another caller
		st.Close()
		return had
	}
	s.byText[query] = st
	return st
}

// InTx is the statement bound to tx, or nil.
func (s *Statements) InTx(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if st := s.Get(ctx, query); st != nil {
		return tx.StmtContext(ctx, st)
	}
	return nil
}
