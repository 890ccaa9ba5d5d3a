// Package pglock is the PostgreSQL connection whose session-level advisory
// locks make one process the applier of a read model (see
// engine.ApplyExclusively).
package pglock

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// applierLockClass is the first key of every projection's advisory lock
// ("om"); the second is a hash of the schema and the projection's name, so
// that omega databases kept in schemas of one database do not share
// appliers. Two names that hash alike share a lock, which only means that
// one process applies both.
const applierLockClass = 0x6f6d

// Session is a PostgreSQL connection of the engine's own. It holds the
// session-level advisory lock of each projection the engine applies, and
// every transaction that applies them runs on it: when the connection
// ends (the process died, or the server ended the session for idling past
// its timeout) the server releases the locks, and no transaction of the
// old holder can commit any more. Two appliers of one read model at once
// are therefore impossible, not merely unlikely.
type Session struct {
	conn *sql.Conn
	mu   sync.Mutex // one transaction or statement at a time
}

// Open takes a connection out of db's pool for good and makes the
// server end it after ttl*3/5 without a statement: a holder that stopped
// (frozen, cut off) loses its locks then, and a process trying every
// ttl/5 takes them over within ttl.
func Open(ctx context.Context, db *sql.DB, ttl time.Duration) (*Session, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the applier session: %w", err)
	}
	s := &Session{conn: conn}
	idle := strconv.FormatInt((ttl * 3 / 5).Milliseconds(), 10)
	// The name shows in pg_stat_activity which process applies.
	name := fmt.Sprintf("omega applier pid %d", os.Getpid())
	if _, err := conn.ExecContext(ctx, `SELECT set_config('idle_session_timeout', $1, false),
		set_config('idle_in_transaction_session_timeout', $1, false), set_config('application_name', $2, false)`, idle, name); err != nil {
		s.Close()
		return nil, fmt.Errorf("set the applier session's timeouts: %w", err)
	}
	return s, nil
}

// TryLock takes the advisory locks of the named projections that no other
// session holds, without waiting, and returns the names it took.
func (s *Session) TryLock(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, s.Ping(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := s.conn.QueryContext(ctx, `SELECT n, pg_try_advisory_lock($1, hashtext(current_schema() || '/' || n))
		FROM unnest(string_to_array($2, ',')) AS n`, applierLockClass, strings.Join(names, ","))
	if err != nil {
		return nil, fmt.Errorf("take projection locks: %w", err)
	}
	defer rows.Close()
	var took []string
	for rows.Next() {
		var name string
		var ok bool
		if err := rows.Scan(&name, &ok); err != nil {
			return nil, fmt.Errorf("take projection locks: %w", err)
		}
		if ok {
			took = append(took, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("take projection locks: %w", err)
	}
	return took, nil
}

// Ping keeps the session from idling out and proves it is alive.
func (s *Session) Ping(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.conn.ExecContext(ctx, "SELECT 1"); err != nil {
		return fmt.Errorf("ping the applier session: %w", err)
	}
	return nil
}

// InTx runs fn in a transaction on the session.
func (s *Session) InTx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The transaction is not bound to ctx: database/sql would roll back
	// one whose context ended from a goroutine of its own and discard the
	// connection there, closing the session under a later Close (which
	// then crashed in database/sql). ctx still interrupts fn's statements,
	// and the rollback below is this goroutine's.
	tx, err := s.conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Close ends the connection, releasing its locks at once. It must never go
// back to the pool: another caller would inherit the locks.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	// database/sql closes a connection whose Raw call reports it bad.
	_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = s.conn.Close()
}
