package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const saveCheckpointSQL = `INSERT INTO checkpoints (name, position) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()`

// Checkpoint implements eventstore.Checkpoints; an unknown consumer is at 0.
func (s *Store) Checkpoint(ctx context.Context, consumer string) (int64, error) {
	var pos int64
	err := s.db.QueryRowContext(ctx, `SELECT position FROM checkpoints WHERE name = $1`, consumer).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint of %s: %w", consumer, err)
	}
	return pos, nil
}

// SaveCheckpoint implements eventstore.Checkpoints.
func (s *Store) SaveCheckpoint(ctx context.Context, consumer string, position int64) error {
	return SaveCheckpointTx(ctx, s.db, consumer, position)
}

// Execer is satisfied by *sql.DB, *sql.Tx and *sql.Conn.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// SaveCheckpointTx saves a checkpoint through ex, typically the
// transaction that holds a projection's writes, so both commit together.
func SaveCheckpointTx(ctx context.Context, ex Execer, consumer string, position int64) error {
	if _, err := ex.ExecContext(ctx, saveCheckpointSQL, consumer, position); err != nil {
		return fmt.Errorf("save checkpoint %s at %d: %w", consumer, position, err)
	}
	return nil
}
