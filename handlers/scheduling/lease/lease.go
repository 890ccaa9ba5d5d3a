// Package lease grants one process of a cluster at a time the right to
// run a chat's turns (or any keyed work), on the event store's lease rows.
package lease

import (
	"context"
	"errors"
	"time"

	"github.com/omega-gateway/omega/eventstore"
)

// Leases grants one process at a time the right to run a sender's turns.
// A lease expires unless renewed, so a process that dies (kill -9, lost
// host) hands its senders to the others after at most one TTL. The event
// store backend keeps the lease rows.
type Leases struct {
	store eventstore.Leases
	owner string
	ttl   time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns the leases owner takes for ttl at a time.
func New(store eventstore.Leases, owner string, ttl time.Duration) (*Leases, error) {
	if store == nil || owner == "" || ttl <= 0 {
		return nil, errors.New("lease: leases need a store, an owner and a positive TTL")
	}
	return &Leases{store: store, owner: owner, ttl: ttl}, nil
}

// Owner is who takes the leases.
func (l *Leases) Owner() string { return l.owner }

// TTL is how long a lease lasts without renewal.
func (l *Leases) TTL() time.Duration { return l.ttl }

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
	return l.store.AcquireLease(ctx, key, l.owner, now.Add(l.ttl), now)
}

// Release gives the lease up if we hold it.
func (l *Leases) Release(ctx context.Context, key string) error {
	return l.store.ReleaseLease(ctx, key, l.owner)
}

// Renew renews the lease on key every TTL/3 until ctx ends (true) or
// another process takes it (false). A renewal that fails is reported to
// failed and tried again at the next tick.
func (l *Leases) Renew(ctx context.Context, key string, failed func(error)) bool {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-t.C:
		}
		ok, err := l.Acquire(ctx, key)
		if err != nil {
			if ctx.Err() == nil {
				failed(err)
			}
			continue
		}
		if !ok {
			return false
		}
	}
}

// Holders returns, of keys, those another owner holds, each with when
// its lease lapses, and those this owner holds. It only reads.
func (l *Leases) Holders(ctx context.Context, keys []string) (elsewhere map[string]time.Time, mine map[string]bool, err error) {
	holds, err := l.store.LeaseHolds(ctx, keys, l.now())
	if err != nil {
		return nil, nil, err
	}
	elsewhere, mine = make(map[string]time.Time, len(holds)), map[string]bool{}
	for k, h := range holds {
		if h.Owner == l.owner {
			mine[k] = true
			continue
		}
		elsewhere[k] = h.Until
	}
	return elsewhere, mine, nil
}

// RenewMany renews the leases on keys this owner holds, in one write, and
// returns those renewed: a key left out was lost.
func (l *Leases) RenewMany(ctx context.Context, keys []string) (map[string]bool, error) {
	renewed, err := l.store.RenewLeases(ctx, keys, l.owner, l.now().Add(l.ttl))
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(renewed))
	for _, k := range renewed {
		out[k] = true
	}
	return out, nil
}
