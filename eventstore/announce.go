package eventstore

// CheckpointNotice is a move of read-model checkpoints that a process
// applying them announced when its transaction committed. Missed means
// notices may have been lost (the listener reconnected): the checkpoints
// must be read again.
type CheckpointNotice struct {
	Consumers []string
	Position  int64
	Missed    bool
}
