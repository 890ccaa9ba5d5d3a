package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/projections/engine/pglock"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// CatchUp applies every event committed before the call to every
// projection and returns; tools use it to read up-to-date models without
// a server, shutdown to see the turns that just finished. Under
// ApplyExclusively a projection another process applies is not applied
// here: CatchUp waits for that process to reach the end (or applies it
// under its lock once nobody holds that).
func (e *Engine) CatchUp(ctx context.Context) error {
	// Without this a transaction still open anywhere in the database would
	// hold back events that have committed (on PostgreSQL).
	if err := e.store.Settle(ctx); err != nil {
		return fmt.Errorf("catch up: %w", err)
	}
	for _, p := range e.projections {
		catchUp, pctx := e.catchUpOne, ctx
		if e.exclusiveTTL > 0 {
			if s, held := e.heldOn(p.Name()); held {
				pctx = withSession(ctx, s)
			} else {
				catchUp = e.catchUpExclusive
			}
		}
		if err := catchUp(pctx, p); err != nil {
			return err
		}
	}
	return nil
}

// catchUpOne applies the log to p from its checkpoint to the end.
func (e *Engine) catchUpOne(ctx context.Context, p readmodel.Projection) error {
	for attempt := 0; ; attempt++ {
		pos, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			return err
		}
		_, err = e.catchUp(ctx, []readmodel.Projection{p}, "", pos, -1, noProgress{})
		var moved *movedError
		if errors.As(err, &moved) && attempt < 3 {
			continue
		}
		return err
	}
}

// heldOn says whether the running engine applies name, and on which session.
func (e *Engine) heldOn(name string) (*pglock.Session, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.held[name]
	return s, ok
}

// catchUpExclusive brings p, which this engine does not apply, to the end
// of the log as it is now without becoming a second applier: it waits for
// the process applying p to get there, or, when p's lock is free (no
// server runs, or its applier died), takes the lock and applies p itself
// on the session holding it.
func (e *Engine) catchUpExclusive(ctx context.Context, p readmodel.Projection) error {
	end, err := e.logEnd(ctx)
	if err != nil || end == 0 {
		return err
	}
	var s *pglock.Session
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	return e.awaitReached(ctx, p, end, nil, func() (bool, error) {
		if s == nil {
			if s, err = pglock.Open(ctx, e.db, e.exclusiveTTL); err != nil {
				return false, err
			}
		}
		took, err := s.TryLock(ctx, []string{p.Name()})
		if err != nil || len(took) == 0 {
			return false, err
		}
		return true, e.catchUpOne(withSession(ctx, s), p)
	})
}

// Reach waits until the named read models show every event committed
// before the call, whoever applies them: this engine's running applier
// (hurried, as for a waiting turn) or another process's. Unlike CatchUp it
// applies nothing itself, so a reader inside a running server can use it;
// with no applier running it waits until ctx ends.
func (e *Engine) Reach(ctx context.Context, projections ...string) error {
	ps, err := e.Select(projections...)
	if err != nil {
		return err
	}
	if err := e.store.Settle(ctx); err != nil {
		return fmt.Errorf("reach %v: %w", projections, err)
	}
	end, err := e.logEnd(ctx)
	if err != nil || end == 0 {
		return err
	}
	defer e.Await()()
	sub, stop := context.WithCancel(ctx)
	defer stop()
	applied := e.Applied(sub)
	for _, p := range ps {
		if err := e.awaitReached(ctx, p, end, applied, nil); err != nil {
			return err
		}
	}
	return nil
}

// awaitReached waits until p's checkpoint reaches the event at end,
// looking again at each signal on wake and at every catchUpPoll. Before
// each wait it calls step, when set: true ends the wait.
func (e *Engine) awaitReached(ctx context.Context, p readmodel.Projection, end int64, wake <-chan struct{}, step func() (bool, error)) error {
	for {
		reached, err := e.reached(ctx, p, end)
		if ctx.Err() != nil {
			return fmt.Errorf("the %s read model has not yet applied the log up to position %d: %w", p.Name(), end, context.Cause(ctx))
		}
		if err != nil || reached {
			return err
		}
		if step != nil {
			if done, err := step(); err != nil || done {
				return err
			}
		}
		select {
		case <-wake:
		case <-time.After(catchUpPoll):
		case <-ctx.Done(): // the next look says so
		}
	}
}

// catchUpPoll is how often a catch-up waiting for another process's
// applier looks at the checkpoint.
const catchUpPoll = 20 * time.Millisecond

// logEnd is the position of the last event delivered now (0: none). On
// SQLite, with one writer, positions are the delivery order.
func (e *Engine) logEnd(ctx context.Context) (int64, error) {
	if e.dialect != readmodel.Postgres {
		return e.Head(ctx)
	}
	var end int64
	err := e.db.QueryRowContext(ctx, `SELECT position FROM events
		WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY transaction_id DESC, position DESC LIMIT 1`).Scan(&end)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find the end of the log: %w", err)
	}
	return end, nil
}

// reached reports whether p's checkpoint is at or past the event at end
// in delivery order.
func (e *Engine) reached(ctx context.Context, p readmodel.Projection, end int64) (bool, error) {
	pos, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
	if err != nil || pos == end {
		return pos == end, err
	}
	if e.dialect != readmodel.Postgres {
		return pos > end, nil
	}
	var past bool
	err = e.db.QueryRowContext(ctx, `SELECT (c.transaction_id, c.position) >= (x.transaction_id, x.position)
		FROM events c, events x WHERE c.position = $1 AND x.position = $2`, pos, end).Scan(&past)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare %s's checkpoint with the end of the log: %w", p.Name(), err)
	}
	return past, nil
}

type sessionKey struct{}

// withSession makes the engine's transactions under ctx run on s, which
// holds the lock of what they apply.
func withSession(ctx context.Context, s *pglock.Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionFrom(ctx context.Context) *pglock.Session {
	s, _ := ctx.Value(sessionKey{}).(*pglock.Session)
	return s
}
