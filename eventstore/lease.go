package eventstore

import (
	"context"
	"time"
)

// Leases grants one owner at a time a named lease that lapses at a given
// time unless renewed. Leases are coordination state, not knowledge: they
// live beside the log in the same database so that every process sharing
// the log shares them.
type Leases interface {
	// AcquireLease takes or renews key for owner until the given time;
	// false means another owner holds a lease that has not lapsed at now.
	AcquireLease(ctx context.Context, key, owner string, until, now time.Time) (bool, error)
	// ReleaseLease gives key up if owner holds it.
	ReleaseLease(ctx context.Context, key, owner string) error
	// LeaseHolds returns, of the given keys, those whose lease has not
	// lapsed at now, with their holders. It only reads: a process asks
	// before it tries to take a lease it saw held, rather than writing to
	// find out.
	LeaseHolds(ctx context.Context, keys []string, now time.Time) (map[string]LeaseHold, error)
	// RenewLeases extends until the given time those of keys that owner
	// holds, in one write for many keys, and returns the keys it renewed:
	// a key left out was lost (taken by another owner after it lapsed, or
	// released).
	RenewLeases(ctx context.Context, keys []string, owner string, until time.Time) ([]string, error)
}

// LeaseHold is who holds a lease and until when.
type LeaseHold struct {
	Owner string
	Until time.Time
}
