package projections

import (
	"context"
	"fmt"
	"time"
)

// The state of a past moment is folded from the log; these queries only
// say which streams to fold (a sender's tasks and turns), so the read
// models serve as an index and never as the answer.

// SenderTasksAt returns the ids of the sender's tasks that may have been
// pending at the moment: scheduled by then, and not settled before it (a
// task's status changes only with an event that moves updated_at).
func (q *Queries) SenderTasksAt(ctx context.Context, snd string, at time.Time) ([]string, error) {
	ids, err := strings1(ctx, q.db, `SELECT id FROM tasks WHERE sender = $1 AND created_at <= $2
		AND (status = 'pending' OR updated_at >= $2)`, snd, at.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("find the tasks of %s: %w", snd, err)
	}
	return ids, nil
}

// SenderTurnsBefore returns the ids of the sender's turns received at or
// before by, newest first, skipping the newest skip: the completed ones
// through the audit's per-sender index (a sender's turns complete in the
// order they arrived), and on the first page before them any still open.
func (q *Queries) SenderTurnsBefore(ctx context.Context, snd string, by time.Time, limit, skip int) ([]string, error) {
	var open []string
	var err error
	if skip == 0 {
		open, err = strings1(ctx, q.db, `SELECT turn_id FROM turns WHERE status = 'open' AND sender = $1 AND received_at <= $2
			ORDER BY arrival DESC`, snd, by.UnixMicro())
		if err != nil {
			return nil, fmt.Errorf("find the open turns of %s: %w", snd, err)
		}
	}
	done, err := strings1(ctx, q.db, `SELECT turn_id FROM audit WHERE sender = $1 AND received_at <= $2
		ORDER BY at DESC, turn_id DESC LIMIT $3 OFFSET $4`, snd, by.UnixMicro(), limit, skip)
	if err != nil {
		return nil, fmt.Errorf("find the turns of %s: %w", snd, err)
	}
	return append(open, done...), nil
}
