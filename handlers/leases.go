package handlers

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Leases grants one process at a time the right to run a sender's turns.
// A lease expires unless renewed, so a process that dies (kill -9, lost
// host) hands its senders to the others after at most one TTL. Both
// backends use the same upsert: it takes a row only when it is free,
// expired, or already ours.
type Leases struct {
	DB    *sql.DB
	Owner string
	TTL   time.Duration
	Now   func() time.Time
}

func (l *Leases) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Acquire takes or renews the lease on key; false means another live
// process holds it.
func (l *Leases) Acquire(ctx context.Context, key string) (bool, error) {
	now := l.now()
	res, err := l.DB.ExecContext(ctx, `INSERT INTO sender_leases (sender, owner, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (sender) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE sender_leases.owner = excluded.owner OR sender_leases.expires_at < $4`,
		key, l.Owner, now.Add(l.TTL).UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	return n == 1, nil
}

// Release gives the lease up if we hold it.
func (l *Leases) Release(ctx context.Context, key string) error {
	if _, err := l.DB.ExecContext(ctx, `DELETE FROM sender_leases WHERE sender = $1 AND owner = $2`, key, l.Owner); err != nil {
		return fmt.Errorf("release lease %s: %w", key, err)
	}
	return nil
}
