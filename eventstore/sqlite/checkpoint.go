package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const upsertCheckpoint = `INSERT INTO checkpoints (name, position, updated_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`

// Checkpoint implements eventstore.Checkpoints; an unknown consumer is at 0.
func (s *Store) Checkpoint(ctx context.Context, consumer string) (int64, error) {
	var pos int64
	err := s.read.QueryRowContext(ctx, `SELECT position FROM checkpoints WHERE name = ?`, consumer).Scan(&pos)
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

// SaveCheckpointTx saves a checkpoint inside a transaction begun on DB(), so
// that a projection's rows and its checkpoint commit together.
func SaveCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string, position int64) error {
	if _, err := tx.ExecContext(ctx, upsertCheckpoint, consumer, position, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", consumer, err)
	}
	return nil
}
