// Package sqlstore holds the SQL both event store backends run alike.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// AcquireLease takes or renews key for owner until the given time with one
// upsert that takes the row only when it is free, lapsed, or already the
// owner's. db must be the backend's write handle.
func AcquireLease(ctx context.Context, db *sql.DB, key, owner string, until, now time.Time) (bool, error) {
	res, err := db.ExecContext(ctx, `INSERT INTO sender_leases (sender, owner, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (sender) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE sender_leases.owner = excluded.owner OR sender_leases.expires_at < $4`,
		key, owner, until.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	return n == 1, nil
}

// ReleaseLease gives key up if owner holds it.
func ReleaseLease(ctx context.Context, db *sql.DB, key, owner string) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM sender_leases WHERE sender = $1 AND owner = $2`, key, owner); err != nil {
		return fmt.Errorf("release lease %s: %w", key, err)
	}
	return nil
}
