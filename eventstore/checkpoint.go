package eventstore

import (
	"context"
	"database/sql"
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
	// MoveCheckpointsTx moves checkpoints locked by LockCheckpointsTx.
	MoveCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error
	// SaveCheckpointTx creates or moves one checkpoint.
	SaveCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string, position int64) error
	// DeleteCheckpointTx forgets a checkpoint.
	DeleteCheckpointTx(ctx context.Context, tx *sql.Tx, consumer string) error
}
