package budget

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain/budget"
)

// Slots bound the calls in flight against a limit, across processes.
//
// A decision counts what the log holds, not the calls still running: two
// processes (or two senders in one) deciding at once would each see the
// same room and together spend it twice. So while a limit is set, each
// call holds a slot of its scope (a lease row beside the log) until its
// outcome is on the log, and a scope has as many slots as the calls its
// room pays for: what is left divided by the largest call this month, at
// least one while anything is left. Whoever takes a slot counts the
// slots held after taking it and gives it back if they are more than the
// room allows, so of two racers at least one sees the other. The calls in
// flight therefore never cost more than what is left plus one call (the
// last, admitted with room for less than itself), as long as no call
// costs more than the largest before it; the first call of a month runs
// alone, since no call's size is known yet.
type slots struct {
	g    *Guard
	keys []string
	// owner is this call's own: a lease is held by one call, not a process.
	owner string
	stop  chan struct{}
	once  sync.Once
}

// slotKey is the lease of slot i of a scope.
func slotKey(scope string, i int) string {
	if scope == "" {
		scope = "all"
	}
	return fmt.Sprintf("budget-slot-%s-%d", scope, i)
}

// takeSlots takes a slot in every limited scope; false when one has none
// free (the call waits for one).
func (g *Guard) takeSlots(ctx context.Context, scopes []budget.Scope, largest budget.Spend, now time.Time) (*slots, bool, error) {
	if len(scopes) == 0 {
		return nil, true, nil
	}
	sl := &slots{g: g, owner: uuid.NewString(), stop: make(chan struct{})}
	for _, s := range scopes {
		room := min(s.Day.Slots(s.Limits.Daily, largest, g.cfg.Slots), s.Month.Slots(s.Limits.Monthly, largest, g.cfg.Slots))
		key, ok, err := g.takeSlot(ctx, s.Name, room, sl.owner, now)
		if err != nil || !ok {
			sl.free(ctx)
			return nil, false, err
		}
		sl.keys = append(sl.keys, key)
	}
	go sl.renew()
	return sl, true, nil
}

// takeSlot takes a free slot of scope when fewer than room are held.
func (g *Guard) takeSlot(ctx context.Context, scope string, room int, owner string, now time.Time) (string, bool, error) {
	keys := make([]string, g.cfg.Slots)
	for i := range keys {
		keys[i] = slotKey(scope, i)
	}
	held, err := g.store.LeaseHolds(ctx, keys, now)
	if err != nil {
		return "", false, fmt.Errorf("budget: read the slots: %w", err)
	}
	if len(held) >= room {
		return "", false, nil
	}
	for _, key := range keys {
		if _, taken := held[key]; taken {
			continue
		}
		ok, err := g.store.AcquireLease(ctx, key, owner, now.Add(g.cfg.SlotTTL), now)
		if err != nil || !ok {
			return "", false, err
		}
		after, err := g.store.LeaseHolds(ctx, keys, now)
		if err != nil || len(after) > room {
			_ = g.store.ReleaseLease(ctx, key, owner)
			return "", false, err
		}
		return key, true, nil
	}
	return "", false, nil
}

// renew keeps the slots while the call runs (a call may take an hour).
func (s *slots) renew() {
	t := time.NewTicker(s.g.cfg.SlotTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.g.cfg.SlotTTL/3)
			if _, err := s.g.store.RenewLeases(ctx, s.keys, s.owner, s.g.now().Add(s.g.cfg.SlotTTL)); err != nil {
				s.g.log.Warn("budget: renewing a call's slots failed", "err", err)
			}
			cancel()
		}
	}
}

// release keeps the slots for the grace only: the call's outcome is
// appended by its caller just after it returns, and until then the room
// it took must stay taken.
func (s *slots) release() {
	s.once.Do(func() {
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := s.g.store.RenewLeases(ctx, s.keys, s.owner, s.g.now().Add(s.g.cfg.Grace)); err != nil {
			s.g.log.Warn("budget: releasing a call's slots failed; they lapse on their own", "err", err)
		}
	})
}

// free gives back slots taken for a call that will not be made.
func (s *slots) free(ctx context.Context) {
	for _, k := range s.keys {
		_ = s.g.store.ReleaseLease(ctx, k, s.owner)
	}
}
