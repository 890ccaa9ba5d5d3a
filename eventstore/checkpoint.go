package eventstore

import "context"

// Checkpoints keeps the position a named consumer has processed up to.
// Both backends implement it in the same database as the log.
type Checkpoints interface {
	Checkpoint(ctx context.Context, consumer string) (int64, error)
	SaveCheckpoint(ctx context.Context, consumer string, position int64) error
}
