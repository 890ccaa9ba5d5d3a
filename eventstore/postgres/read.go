package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

const eventColumns = `position, stream_id, version, event_id, type, data, metadata, recorded_at`

// The horizon test keeps every transaction that may still commit, and
// everything after it in delivery order, out of the result (package doc).
const (
	readFirstSQL = `SELECT ` + eventColumns + ` FROM events
WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY transaction_id, position
LIMIT $1`
	readAfterSQL = `SELECT ` + eventColumns + ` FROM events
WHERE (transaction_id, position) > (SELECT transaction_id, position FROM events WHERE position = $1)
  AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY transaction_id, position
LIMIT $2`
	loadSQL = `SELECT ` + eventColumns + ` FROM events
WHERE stream_id = $1 AND version >= $2
ORDER BY version`
	versionSQL = `SELECT coalesce(max(version), 0) FROM events WHERE stream_id = $1`
	// readAwaitingSQL is readAfterSQL (or readFirstSQL, after 0) once the
	// horizon has passed the transaction of the event at $3, waiting in
	// the server up to $4 ms (migration read_after_horizon).
	readAwaitingSQL = `SELECT ` + eventColumns + ` FROM read_after_horizon($1, $2, $3, $4)`
	// readAfterSignalledSQL and readAwaitingSignalledSQL are readAfterSQL
	// and readAwaitingSQL that also send a change signal ($3 or $5: the
	// channel, then the payload) when they commit, without waiting for
	// the commit's flush (see notifySQL). The signal is a one-time filter,
	// so it is sent once whatever the read returns; a read takes no
	// transaction id before its commit, so it holds the horizon back no
	// longer than notifySQL does.
	readAfterSignalledSQL = `WITH signal AS MATERIALIZED (SELECT pg_notify($3, $4), set_config('synchronous_commit', 'off', true))
SELECT ` + eventColumns + ` FROM events
WHERE (transaction_id, position) > (SELECT transaction_id, position FROM events WHERE position = $1)
  AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  AND EXISTS (SELECT FROM signal)
ORDER BY transaction_id, position
LIMIT $2`
	readAwaitingSignalledSQL = `WITH signal AS MATERIALIZED (SELECT pg_notify($5, $6), set_config('synchronous_commit', 'off', true))
SELECT ` + eventColumns + ` FROM read_after_horizon($1, $2, $3, $4) WHERE EXISTS (SELECT FROM signal)`
)

// horizonWait bounds how long one of the Tail's reads waits in the server
// for an awaited own commit to become readable: longer than an append's
// transaction lasts under load (10–35 ms on a busy 2-core machine, its
// flush included), so that the read nearly always returns what it waited
// for rather than run out and be made again; a transaction that holds the
// horizon back for long costs a read this often, not one per signal. A
// later message can be placed no sooner than the one awaited, so waiting
// longer in one read delays nothing.
const horizonWait = 100 * time.Millisecond

// ReadAll implements eventstore.Store. after must be 0 or the position of
// an event ReadAll has returned.
func (s *Store) ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error) {
	return s.readAll(ctx, after, limit, true)
}

// readAwaiting is the shared Tail's read while it awaits this process's
// commit at position awaited: it waits in the server for that commit's
// place in the delivery order to become readable instead of reading
// before it is (eventstore.Tail.SetAwaitingRead).
func (s *Store) readAwaiting(ctx context.Context, after int64, limit int, awaited int64) ([]domain.Event, error) {
	return s.readAwaitingFor(ctx, after, limit, awaited, horizonWait)
}

func (s *Store) readAwaitingFor(ctx context.Context, after int64, limit int, awaited int64, wait time.Duration) ([]domain.Event, error) {
	if s.notifier.take() {
		return s.readSignalled(ctx, after, limit, awaited, wait)
	}
	rows, err := s.readAwaitingStmt.QueryContext(ctx, after, limit, awaited, wait.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("read all after %d once %d is readable: %w", after, awaited, err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read all after %d once %d is readable: %w", after, awaited, err)
	}
	return events, nil
}

// tailRead is the shared Tail's read: it carries this process's pending
// change signal, if any, so that a busy process signals its appends to
// the others with reads it makes anyway.
func (s *Store) tailRead(ctx context.Context, after int64, limit int) ([]domain.Event, error) {
	if s.notifier.take() {
		return s.readSignalled(ctx, after, limit, 0, 0)
	}
	return s.readAll(ctx, after, limit, false)
}

// readSignalled is readAwaitingFor (a plain read when awaited is 0) that
// sends the change signal the notifier handed over; a read that fails
// hands it back.
func (s *Store) readSignalled(ctx context.Context, after int64, limit int, awaited int64, wait time.Duration) ([]domain.Event, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if awaited > 0 || after <= 0 {
		rows, err = s.readAwaitingSignalledStmt.QueryContext(ctx, after, limit, awaited, wait.Milliseconds(), notifyChannel, s.notifier.instance)
	} else {
		rows, err = s.readAfterSignalledStmt.QueryContext(ctx, after, limit, notifyChannel, s.notifier.instance)
	}
	if err != nil {
		s.notifier.signal()
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		s.notifier.signal()
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	return events, nil
}

// readAll is ReadAll; check asks for an unknown cursor to be reported
// (the shared Tail only passes positions it read, so it skips the query).
func (s *Store) readAll(ctx context.Context, after int64, limit int, check bool) ([]domain.Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("read all after %d: limit %d must be positive", after, limit)
	}
	var (
		rows *sql.Rows
		err  error
	)
	if after <= 0 {
		rows, err = s.readFirstStmt.QueryContext(ctx, limit)
	} else {
		rows, err = s.readAfterStmt.QueryContext(ctx, after, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	if check {
		// Not the Tail's read (the Tail tells the cache itself).
		s.cache.Observe(events)
	}
	if len(events) == 0 && after > 0 && check {
		// An unknown cursor would otherwise read as "nothing new" forever.
		if err := s.checkPosition(ctx, after); err != nil {
			return nil, err
		}
	}
	return events, nil
}

func (s *Store) checkPosition(ctx context.Context, pos int64) error {
	var exists bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE position = $1)`, pos).Scan(&exists); err != nil {
		return fmt.Errorf("read all after %d: %w", pos, err)
	}
	if !exists {
		return fmt.Errorf("read all after %d: no event has that position", pos)
	}
	return nil
}

// Load implements eventstore.Store.
func (s *Store) Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error) {
	if !eventstore.ReadsFresh(ctx) {
		if evs, ok := s.cache.Load(stream, fromVersion); ok {
			return evs, nil
		}
	}
	tok := s.cache.Token()
	rows, err := s.loadStmt.QueryContext(ctx, stream, fromVersion)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", stream, err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", stream, err)
	}
	s.cache.Loaded(tok, stream, fromVersion, events)
	return events, nil
}

// StreamVersion implements eventstore.Store.
func (s *Store) StreamVersion(ctx context.Context, stream string) (int64, error) {
	if v, ok := s.cache.Version(stream); ok {
		return v, nil
	}
	tok := s.cache.Token()
	var v int64
	err := s.versionStmt.QueryRowContext(ctx, stream).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("version of %s: %w", stream, err)
	}
	s.cache.VersionRead(tok, stream, v)
	return v, nil
}

func scanEvents(rows *sql.Rows) ([]domain.Event, error) {
	defer rows.Close()
	// No room is made for a whole batch: a read at the end of the log
	// usually finds an event or two, and clearing the rest cost more.
	var (
		events []domain.Event
		// Scanned into in place, one of each per read: declared in the
		// loop, each row's event escaped to the heap of its own.
		e  domain.Event
		md []byte
	)
	for rows.Next() {
		e = domain.Event{}
		if err := rows.Scan(&e.Position, &e.StreamID, &e.Version, &e.ID, &e.Type, &e.Data, &md, &e.RecordedAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(md, &e.Metadata); err != nil {
			return nil, fmt.Errorf("event at position %d: metadata: %w", e.Position, err)
		}
		events = append(events, e)
	}
	return events, rows.Err()
}

// LoadCached implements eventstore.CachedLoader.
func (s *Store) LoadCached(stream string) ([]domain.Event, bool) { return s.cache.Load(stream, 1) }

// WatchCached implements eventstore.CachedLoader.
func (s *Store) WatchCached(stream string) (<-chan struct{}, func()) { return s.cache.Watch(stream) }

// DropCached forgets the in-memory copy of a stream. Only a tool that
// rewrote the stream's rows behind the store's back needs it (tests of
// old event shapes do); the log is append-only otherwise.
func (s *Store) DropCached(stream string) { s.cache.Drop(stream) }

// settleSQL tells whether any transaction that ReadAll's horizon waits
// for is running, and the first transaction id not yet assigned.
const settleSQL = `SELECT pg_snapshot_xmin(s) = pg_snapshot_xmax(s), pg_snapshot_xmax(s)::text FROM pg_current_snapshot() s`

// Settle implements eventstore.Store: it waits until every transaction
// running at the call has ended, which moves ReadAll's horizon past every
// event committed before it (package doc). Transactions that began after
// the call are not waited for.
func (s *Store) Settle(ctx context.Context) error {
	var (
		idle   bool
		target string
	)
	if err := s.db.QueryRowContext(ctx, settleSQL).Scan(&idle, &target); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	for wait := time.Millisecond; !idle; wait = min(2*wait, 50*time.Millisecond) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("settle: transactions older than %s still running: %w", target, context.Cause(ctx))
		case <-time.After(wait):
		}
		err := s.db.QueryRowContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8`, target).Scan(&idle)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
	}
	return nil
}
