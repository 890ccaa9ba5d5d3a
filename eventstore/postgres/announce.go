package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/omega-gateway/omega/eventstore"
)

// checkpointChannel carries the checkpoints a process's projection
// applier commits, so that the other processes, which only read the read
// models, know how far they are without reading the checkpoints.
const checkpointChannel = "omega_checkpoints"

// AnnounceCheckpointsTx tells every process watching checkpoints that
// consumers moved to position, when tx commits (a rolled-back tx
// announces nothing).
func (s *Store) AnnounceCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error {
	payload := s.schema + " " + strconv.FormatInt(position, 10) + " " + strings.Join(consumers, " ")
	if _, err := tx.StmtContext(ctx, s.announceStmt).ExecContext(ctx, checkpointChannel, payload); err != nil {
		return fmt.Errorf("announce checkpoints %v at %d: %w", consumers, position, err)
	}
	return nil
}

// WatchCheckpoints calls fn with every checkpoint move announced by any
// process (this one included), in commit order, until ctx ends; and with
// a Missed notice when the listener reconnected. fn runs on the listener's
// goroutine and must not block.
func (s *Store) WatchCheckpoints(ctx context.Context, fn func(eventstore.CheckpointNotice)) {
	s.watchers.add(ctx, fn)
}

// checkpointWatchers fans announcements out to the watching functions.
type checkpointWatchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(eventstore.CheckpointNotice)
}

func (w *checkpointWatchers) add(ctx context.Context, fn func(eventstore.CheckpointNotice)) {
	w.mu.Lock()
	if w.fns == nil {
		w.fns = map[int]func(eventstore.CheckpointNotice){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}()
}

func (w *checkpointWatchers) notify(n eventstore.CheckpointNotice) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, fn := range w.fns {
		fn(n)
	}
}

// parseCheckpointNotice reads AnnounceCheckpointsTx's payload; false for
// another schema's (the channel is the database's). A payload it cannot
// read counts as missed notices.
func parseCheckpointNotice(schema, payload string) (eventstore.CheckpointNotice, bool) {
	fields := strings.Fields(payload)
	if len(fields) < 3 {
		return eventstore.CheckpointNotice{Missed: true}, true
	}
	if fields[0] != schema {
		return eventstore.CheckpointNotice{}, false
	}
	pos, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return eventstore.CheckpointNotice{Missed: true}, true
	}
	return eventstore.CheckpointNotice{Consumers: fields[2:], Position: pos}, true
}
