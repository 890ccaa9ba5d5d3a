package sqlite

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/internal/sqlstore"
)

// AcquireLease implements eventstore.Leases.
func (s *Store) AcquireLease(ctx context.Context, key, owner string, until, now time.Time) (bool, error) {
	return sqlstore.AcquireLease(ctx, s.write, key, owner, until, now)
}

// ReleaseLease implements eventstore.Leases.
func (s *Store) ReleaseLease(ctx context.Context, key, owner string) error {
	return sqlstore.ReleaseLease(ctx, s.write, key, owner)
}

// LeaseHolds implements eventstore.Leases.
func (s *Store) LeaseHolds(ctx context.Context, keys []string, now time.Time) (map[string]eventstore.LeaseHold, error) {
	return sqlstore.LeaseHolds(ctx, s.read, keys, now)
}

// RenewLeases implements eventstore.Leases.
func (s *Store) RenewLeases(ctx context.Context, keys []string, owner string, until time.Time) ([]string, error) {
	return sqlstore.RenewLeases(ctx, s.write, keys, owner, until)
}
