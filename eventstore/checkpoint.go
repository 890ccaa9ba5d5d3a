package eventstore

import (
	"context"
	"database/sql"
	"fmt"
)

// Checkpoints keeps the position a named consumer has processed up to.
// Both backends implement it in the same database as the log.
type Checkpoints interface {
	Checkpoint(ctx context.Context, consumer string) (int64, error)
	SaveCheckpoint(ctx context.Context, consumer string, position int64) error
}

// TxCheckpoints keeps checkpoints inside a caller's transaction on the
// store's database, so that a read model's rows and its checkpoint commit
// together. The backend owns the SQL (PostgreSQL locks rows, SQLite's
// write transaction is already exclusive).
type TxCheckpoints interface {
	// CheckpointTx reads a checkpoint; an unknown consumer is at 0.
	CheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) (int64, error)
	// LockCheckpointsTx returns the checkpoints of consumers in the order
	// given, creating missing ones at 0 and locking them until tx ends.
	LockCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string) ([]int64, error)
	// MoveCheckpointsTx moves checkpoints locked by LockCheckpointsTx. The
	// backend may let tx commit without waiting for durability: read
	// models are rebuilt from the log, and a crash that loses the commit
	// loses the checkpoint with the rows.
	MoveCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error
	// AdvanceCheckpointsTx moves the checkpoints of consumers from one
	// position to another and locks them until tx ends, in one statement;
	// false when any is missing or elsewhere: the caller must then roll tx
	// back (some may have moved) and find out with LockCheckpointsTx. The backend may let tx
	// commit without waiting for durability, as with MoveCheckpointsTx.
	AdvanceCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, from, to int64) (bool, error)
	// SaveCheckpointTx creates or moves one checkpoint.
	SaveCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string, position int64) error
	// DeleteCheckpointTx forgets a checkpoint.
	DeleteCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) error
}

// AdvancedAll turns the result of a backend's checkpoint advance into
// AdvanceCheckpointsTx's answer: whether every one of consumers moved.
func AdvancedAll(res sql.Result, err error, consumers []string) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("advance checkpoints %v: %w", consumers, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("advance checkpoints %v: %w", consumers, err)
	}
	return n == int64(len(consumers)), nil
}
