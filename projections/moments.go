package projections

import (
	"context"
	"fmt"
	"time"
)

// The state of a past moment is folded from the log; these queries only
// say which streams to fold (a sender's tasks, a chat's turns), so the
// read models serve as an index and never as the answer.

// SenderTaskIDs returns the ids of every task the sender scheduled,
// whatever became of it.
func (q *Queries) SenderTaskIDs(ctx context.Context, snd string) ([]string, error) {
	ids, err := strings1(ctx, q.db, `SELECT id FROM tasks WHERE sender = $1`, snd)
	if err != nil {
		return nil, fmt.Errorf("find the tasks of %s: %w", snd, err)
	}
	return ids, nil
}

// ChatTurnsBefore returns the ids of the chat's turns received at or
// before by, newest first, skipping the newest skip.
func (q *Queries) ChatTurnsBefore(ctx context.Context, chat string, by time.Time, limit, skip int) ([]string, error) {
	ids, err := strings1(ctx, q.db, `SELECT turn_id FROM turns WHERE chat = $1 AND received_at <= $2
		ORDER BY arrival DESC LIMIT $3 OFFSET $4`, chat, by.UnixMicro(), limit, skip)
	if err != nil {
		return nil, fmt.Errorf("find the turns of %s: %w", chat, err)
	}
	return ids, nil
}
