// Package sqlstore holds the SQL both event store backends run alike.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/eventstore"
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

// RenewLeases extends the leases owner holds on keys until the given time
// and returns the keys renewed. db must be the backend's write handle.
func RenewLeases(ctx context.Context, db *sql.DB, keys []string, owner string, until time.Time) ([]string, error) {
	var out []string
	for len(keys) > 0 {
		page := keys[:min(len(keys), holdsPage)]
		keys = keys[len(page):]
		args := []any{until.UnixMilli(), owner}
		rows, err := db.QueryContext(ctx, `UPDATE sender_leases SET expires_at = $1
			WHERE owner = $2 AND sender IN (`+placeholders(page, 3, &args)+`) RETURNING sender`, args...)
		if err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		out, err = appendKeys(rows, out)
		if err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
	}
	return out, nil
}

// placeholders returns "$first, $first+1, ..." for keys and appends the
// keys to args.
func placeholders(keys []string, first int, args *[]any) string {
	ph := make([]string, len(keys))
	for i, k := range keys {
		ph[i] = fmt.Sprintf("$%d", first+i)
		*args = append(*args, k)
	}
	return strings.Join(ph, ", ")
}

func appendKeys(rows *sql.Rows, out []string) ([]string, error) {
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// holdsPage bounds the keys of one statement (SQLite allows 32,766
// parameters; PostgreSQL 65,535).
const holdsPage = 500

// LeaseHolds returns the leases on keys that have not lapsed at now.
func LeaseHolds(ctx context.Context, db *sql.DB, keys []string, now time.Time) (map[string]eventstore.LeaseHold, error) {
	out := map[string]eventstore.LeaseHold{}
	for len(keys) > 0 {
		page := keys[:min(len(keys), holdsPage)]
		keys = keys[len(page):]
		if err := leaseHoldsPage(ctx, db, page, now, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func leaseHoldsPage(ctx context.Context, db *sql.DB, keys []string, now time.Time, out map[string]eventstore.LeaseHold) error {
	args := []any{now.UnixMilli()}
	in := placeholders(keys, 2, &args)
	rows, err := db.QueryContext(ctx, `SELECT sender, owner, expires_at FROM sender_leases
		WHERE expires_at >= $1 AND sender IN (`+in+`)`, args...)
	if err != nil {
		return fmt.Errorf("read leases: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, owner string
		var until int64
		if err := rows.Scan(&key, &owner, &until); err != nil {
			return fmt.Errorf("read leases: %w", err)
		}
		out[key] = eventstore.LeaseHold{Owner: owner, Until: time.UnixMilli(until)}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read leases: %w", err)
	}
	return nil
}
