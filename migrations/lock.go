package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3/lock"
)

// waitingLocker is goose's PostgreSQL session lock (the same advisory
// lock id, so that it excludes older omega binaries too) taken by waiting
// for it rather than by trying every five seconds: processes started
// together each waited for the next try, five seconds apiece, while the
// first one's migrations took milliseconds.
type waitingLocker struct{ id int64 }

var _ lock.SessionLocker = waitingLocker{}

func (l waitingLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, l.id); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	return nil
}

func (l waitingLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var unlocked bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1)`, l.id).Scan(&unlocked); err != nil {
		return fmt.Errorf("release the migration lock: %w", err)
	}
	if !unlocked {
		return fmt.Errorf("release the migration lock: this session did not hold it")
	}
	return nil
}
