package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
)

// DueTask is a task that needs the clock: pending, or with an occurrence
// in flight (fired, not settled).
type DueTask struct {
	ID  string
	Due time.Time
}

// DueTasks returns every task that needs the clock and the log position
// the tasks read model reflects, read from one snapshot: following the
// log after that position misses no change.
func (q *Queries) DueTasks(ctx context.Context) (int64, []DueTask, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if q.dialect == readmodel.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := q.db.BeginTx(ctx, opts)
	if err != nil {
		return 0, nil, fmt.Errorf("due tasks: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	var pos int64
	err = tx.QueryRowContext(ctx, "SELECT position FROM checkpoints WHERE name = $1", readmodel.CheckpointName(tasks.ReadModel{})).Scan(&pos)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, fmt.Errorf("due tasks: checkpoint: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, CASE WHEN firing > 0 THEN firing_due ELSE due_at END FROM tasks
		WHERE status = 'pending' OR firing > 0`)
	if err != nil {
		return 0, nil, fmt.Errorf("due tasks: %w", err)
	}
	defer rows.Close()
	var out []DueTask
	for rows.Next() {
		var t DueTask
		var due int64
		if err := rows.Scan(&t.ID, &due); err != nil {
			return 0, nil, fmt.Errorf("due tasks: %w", err)
		}
		t.Due = time.UnixMicro(due).UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("due tasks: %w", err)
	}
	return pos, out, nil
}
