package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/eventstore"
)

const upsertCheckpoint = `INSERT INTO checkpoints (name, position, updated_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`

// rowQuerier is satisfied by *sql.DB and *sql.Tx.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Checkpoint implements eventstore.Checkpoints; an unknown consumer is at 0.
func (s *Store) Checkpoint(ctx context.Context, consumer string) (int64, error) {
	return checkpoint(ctx, s.read, consumer)
}

// CheckpointTx implements eventstore.TxCheckpoints.
func (s *Store) CheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) (int64, error) {
	return checkpoint(ctx, tx, consumer)
}

func checkpoint(ctx context.Context, q rowQuerier, consumer string) (int64, error) {
	var pos int64
	err := q.QueryRowContext(ctx, `SELECT position FROM checkpoints WHERE name = ?`, consumer).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: %w", consumer, err)
	}
	return pos, nil
}

// SaveCheckpoint implements eventstore.Checkpoints.
func (s *Store) SaveCheckpoint(ctx context.Context, consumer string, position int64) error {
	if _, err := s.write.ExecContext(ctx, upsertCheckpoint, consumer, position, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", consumer, err)
	}
	return nil
}

// SaveCheckpointTx implements eventstore.TxCheckpoints: the transaction
// must be begun on DB(), so that a projection's rows and its checkpoint
// commit together.
func (s *Store) SaveCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string, position int64) error {
	if _, err := tx.ExecContext(ctx, upsertCheckpoint, consumer, position, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", consumer, err)
	}
	return nil
}

// LockCheckpointsTx implements eventstore.TxCheckpoints. SQLite write
// transactions are already exclusive, so reading is locking.
func (s *Store) LockCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string) ([]int64, error) {
	out := make([]int64, len(consumers))
	for i, c := range consumers {
		pos, err := checkpoint(ctx, tx, c)
		if err != nil {
			return nil, err
		}
		out[i] = pos
	}
	return out, nil
}

// MoveCheckpointsTx implements eventstore.TxCheckpoints.
func (s *Store) MoveCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error {
	for _, c := range consumers {
		if err := s.SaveCheckpointTx(ctx, tx, c, position); err != nil {
			return err
		}
	}
	return nil
}

// AdvanceCheckpointsTx implements eventstore.TxCheckpoints.
func (s *Store) AdvanceCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, from, to int64) (bool, error) {
	if len(consumers) == 0 {
		return true, nil
	}
	args := make([]any, 0, len(consumers)+3)
	args = append(args, to, time.Now().UnixMicro(), from)
	for _, c := range consumers {
		args = append(args, c)
	}
	q := `UPDATE checkpoints SET position = ?, updated_at = ? WHERE position = ? AND name IN (?` + strings.Repeat(", ?", len(consumers)-1) + `)`
	res, err := tx.ExecContext(ctx, q, args...)
	return eventstore.AdvancedAll(res, err, consumers)
}

// DeleteCheckpointTx implements eventstore.TxCheckpoints.
func (s *Store) DeleteCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE name = ?`, consumer); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", consumer, err)
	}
	return nil
}
