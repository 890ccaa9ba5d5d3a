package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/projections/readmodel"
)

// Status is a projection's progress.
type Status struct {
	Name     string
	Position int64
}

// Statuses returns every projection's checkpoint.
func (e *Engine) Statuses(ctx context.Context) ([]Status, error) {
	out := make([]Status, 0, len(e.projections))
	for _, p := range e.projections {
		pos, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			return nil, err
		}
		out = append(out, Status{Name: p.Name(), Position: pos})
	}
	return out, nil
}

// Lag is how far the slowest projection trails the log.
type Lag struct {
	Events int64         // events not yet applied
	Age    time.Duration // since the oldest of them was recorded; 0 when caught up
}

// Lag measures the slowest projection's lag behind the log.
func (e *Engine) Lag(ctx context.Context) (Lag, error) {
	statuses, err := e.Statuses(ctx)
	if err != nil {
		return Lag{}, err
	}
	if len(statuses) == 0 {
		return Lag{}, nil
	}
	slowest := statuses[0].Position
	for _, s := range statuses[1:] {
		slowest = min(slowest, s.Position)
	}
	var lag Lag
	// Positions may commit out of order on PostgreSQL: the count is of
	// positions above the checkpoint, exact once they have committed.
	if err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE position > $1`, slowest).Scan(&lag.Events); err != nil {
		return Lag{}, fmt.Errorf("count events after %d: %w", slowest, err)
	}
	next, err := e.store.ReadAll(ctx, slowest, 1)
	if err != nil {
		return Lag{}, fmt.Errorf("read the next event after %d: %w", slowest, err)
	}
	if len(next) > 0 {
		lag.Age = max(time.Since(next[0].RecordedAt), 0)
	}
	return lag, nil
}

// Head returns the highest position in the log (0 when empty).
func (e *Engine) Head(ctx context.Context) (int64, error) {
	var head int64
	if err := e.db.QueryRowContext(ctx, `SELECT COALESCE(max(position), 0) FROM events`).Scan(&head); err != nil {
		return 0, fmt.Errorf("read the log's head: %w", err)
	}
	return head, nil
}

// Ping reports whether the database answers.
func (e *Engine) Ping(ctx context.Context) error {
	if err := e.db.PingContext(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	var one int
	if err := e.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	return nil
}

// OpenTurns counts the turns that have not completed.
func (e *Engine) OpenTurns(ctx context.Context) (int64, error) {
	var n int64
	if err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE status = 'open'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count open turns: %w", err)
	}
	return n, nil
}

// PoisonedCount counts what the poison queues hold: messages handlers gave
// up on and events projections skipped (streams poison-*).
func (e *Engine) PoisonedCount(ctx context.Context) (int64, error) {
	var n int64
	if err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE substr(stream_id, 1, 7) = 'poison-'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count poisoned: %w", err)
	}
	return n, nil
}
