package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"

	"github.com/omega-gateway/omega/eventstore"
)

const saveCheckpointSQL = `INSERT INTO checkpoints (name, position) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET position = excluded.position, updated_at = now()`

// rowQuerier is satisfied by *sql.DB and *sql.Tx.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Checkpoint implements eventstore.Checkpoints; an unknown consumer is at 0.
func (s *Store) Checkpoint(ctx context.Context, consumer string) (int64, error) {
	return checkpoint(ctx, s.db, consumer)
}

// CheckpointTx implements eventstore.TxCheckpoints.
func (s *Store) CheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) (int64, error) {
	return checkpoint(ctx, tx, consumer)
}

func checkpoint(ctx context.Context, q rowQuerier, consumer string) (int64, error) {
	var pos int64
	err := q.QueryRowContext(ctx, `SELECT position FROM checkpoints WHERE name = $1`, consumer).Scan(&pos)
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
	if _, err := s.db.ExecContext(ctx, saveCheckpointSQL, consumer, position); err != nil {
		return fmt.Errorf("save checkpoint %s at %d: %w", consumer, position, err)
	}
	return nil
}

// SaveCheckpointTx implements eventstore.TxCheckpoints.
func (s *Store) SaveCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string, position int64) error {
	if _, err := tx.ExecContext(ctx, saveCheckpointSQL, consumer, position); err != nil {
		return fmt.Errorf("save checkpoint %s at %d: %w", consumer, position, err)
	}
	return nil
}

// LockCheckpointsTx implements eventstore.TxCheckpoints: it reads and
// locks the rows, in one round trip once they exist; missing rows are
// created first (a new projection, or a rebuild that removed them).
func (s *Store) LockCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string) ([]int64, error) {
	byName, err := lockCheckpoints(ctx, tx, consumers)
	if err != nil {
		return nil, err
	}
	if len(byName) < len(consumers) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (name, position) SELECT unnest($1::text[]), 0 ON CONFLICT (name) DO NOTHING`, pq.Array(consumers)); err != nil {
			return nil, fmt.Errorf("init checkpoints %v: %w", consumers, err)
		}
		if byName, err = lockCheckpoints(ctx, tx, consumers); err != nil {
			return nil, err
		}
	}
	out := make([]int64, len(consumers))
	for i, c := range consumers {
		out[i] = byName[c]
	}
	return out, nil
}

func lockCheckpoints(ctx context.Context, tx *sql.Tx, consumers []string) (map[string]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, position FROM checkpoints WHERE name = ANY($1) FOR UPDATE`, pq.Array(consumers))
	if err != nil {
		return nil, fmt.Errorf("lock checkpoints %v: %w", consumers, err)
	}
	defer rows.Close()
	byName := make(map[string]int64, len(consumers))
	for rows.Next() {
		var name string
		var pos int64
		if err := rows.Scan(&name, &pos); err != nil {
			return nil, fmt.Errorf("lock checkpoints %v: %w", consumers, err)
		}
		byName[name] = pos
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock checkpoints %v: %w", consumers, err)
	}
	return byName, nil
}

// moveCheckpointsSQL moves checkpoints and lets the transaction commit
// without waiting for its WAL flush (synchronous_commit off, for this
// transaction only, set in the same round trip). A read model is
// disposable: a server crash can lose only its last few commits, rows and
// checkpoint together, and they are applied again from the log. Any
// later durable append flushes them anyway (the WAL is sequential).
const moveCheckpointsSQL = `WITH async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
UPDATE checkpoints SET position = $2, updated_at = now() FROM async WHERE name = ANY($1)`

// MoveCheckpointsTx implements eventstore.TxCheckpoints.
func (s *Store) MoveCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error {
	if _, err := tx.ExecContext(ctx, moveCheckpointsSQL, pq.Array(consumers), position); err != nil {
		return fmt.Errorf("save checkpoints %v: %w", consumers, err)
	}
	return nil
}

// advanceCheckpointsSQL is moveCheckpointsSQL for checkpoints that must
// all be at $3; it returns the rows it moved.
const advanceCheckpointsSQL = `WITH async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
UPDATE checkpoints SET position = $2, updated_at = now() FROM async WHERE name = ANY($1) AND position = $3 RETURNING name`

// AdvanceCheckpointsTx implements eventstore.TxCheckpoints. When it
// reports false some rows may have moved: the caller rolls tx back.
func (s *Store) AdvanceCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, from, to int64) (bool, error) {
	res, err := tx.StmtContext(ctx, s.advanceStmt).ExecContext(ctx, pq.Array(consumers), to, from)
	return eventstore.AdvancedAll(res, err, consumers)
}

// DeleteCheckpointTx implements eventstore.TxCheckpoints.
func (s *Store) DeleteCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE name = $1`, consumer); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", consumer, err)
	}
	return nil
}
