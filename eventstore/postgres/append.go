package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/wait"
)

// appendSQL checks the expected version and inserts every event in one
// statement (one round trip for any batch size). It always returns at least
// one row carrying the version it saw; the inserted columns are NULL when
// the check failed. The INSERT is the transaction's first write, so it is
// what assigns the transaction id (see the package doc).
//
// The last column tells where the events go in the delivery order when no
// reader can be told otherwise: if the statement's snapshot saw no
// transaction running and none took an id between the snapshot and this
// one's (its horizon is this very transaction), every older transaction has
// ended, so the events come right after the last one of an older
// transaction, and that position is returned (0 for none). Otherwise NULL.
const appendSQL = `
WITH cur AS (
    SELECT coalesce(max(version), 0) AS v FROM events WHERE stream_id = $1
), ins AS (
    INSERT INTO events (stream_id, version, event_id, type, data, metadata)
    SELECT $1, cur.v + t.ord, t.id, t.type, t.data, t.metadata
    FROM cur, unnest($3::uuid[], $4::text[], $5::json[], $6::json[])
        WITH ORDINALITY AS t(id, type, data, metadata, ord)
    WHERE $2::bigint < 0 OR cur.v = $2::bigint
    ORDER BY t.ord
    RETURNING position, version, recorded_at, transaction_id
), prev AS (
    SELECT coalesce((SELECT e.position FROM events e WHERE e.transaction_id < x.xid
        ORDER BY e.transaction_id DESC, e.position DESC LIMIT 1), 0) AS position
    FROM (SELECT transaction_id AS xid FROM ins LIMIT 1) x
    WHERE pg_snapshot_xmin(pg_current_snapshot()) = x.xid
)
SELECT cur.v, ins.position, ins.version, ins.recorded_at, (SELECT position FROM prev)
FROM cur LEFT JOIN ins ON true ORDER BY ins.version`

// anyRetries bounds how often an append with expected version Any is
// retried after losing a race for the next version number to another
// writer of the same stream. Each retry waits a little, at random, so that
// writers of a hot stream stop colliding.
const anyRetries = 100

// Append implements eventstore.Store. Each append is one transaction:
// BEGIN, one INSERT that checks the version and writes every event, the
// BeforeCommit hook, COMMIT. An append with expected version Any that
// loses the race for the next version number to a concurrent writer is
// retried instead of failing.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, events ...domain.NewEvent) (eventstore.AppendResult, error) {
	if err := eventstore.Validate(stream, expected, events); err != nil {
		return eventstore.AppendResult{}, err
	}
	args, err := appendArgs(stream, expected, events, s.versions)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	for attempt := 1; ; attempt++ {
		in, err := s.appendOnce(ctx, stream, expected, args, len(events))
		var ce *eventstore.ConcurrencyError
		if err != nil {
			s.cache.Drop(stream) // a failed commit may still have committed
		}
		if expected == eventstore.Any && errors.As(err, &ce) && attempt < anyRetries {
			if err := backoff(ctx, attempt); err != nil {
				return eventstore.AppendResult{}, fmt.Errorf("append %s: %w", stream, err)
			}
			continue
		}
		if err != nil {
			return eventstore.AppendResult{}, err
		}
		res := in.result(len(events))
		recorded := eventstore.Recorded(stream, events, res, in.at, s.versions)
		s.cache.Committed(stream, recorded)
		if !in.prev.Valid || recorded == nil || !s.tail.Delivered(in.prev.Int64, recorded) {
			s.tail.Committed(committed(recorded, res.Positions))
			s.unread.Notify()
		}
		s.local.Notify()
		s.notifier.signal()
		return res, nil
	}
}

// committed is what the Tail is told an append committed: its events, or
// their positions alone if they could not be rebuilt.
func committed(recorded []domain.Event, positions []int64) []domain.Event {
	if recorded != nil {
		return recorded
	}
	out := make([]domain.Event, len(positions))
	for i, p := range positions {
		out[i].Position = p
	}
	return out
}

func backoff(ctx context.Context, attempt int) error {
	limit := time.Duration(min(attempt, 10)) * time.Millisecond
	return wait.Sleep(ctx, rand.N(limit)+time.Microsecond)
}

func appendArgs(stream string, expected eventstore.ExpectedVersion, events []domain.NewEvent, versions eventstore.SchemaVersions) ([]any, error) {
	ids := make([]string, len(events))
	types := make([]string, len(events))
	data := make([][]byte, len(events))
	meta := make([][]byte, len(events))
	for i, e := range events {
		md, err := json.Marshal(eventstore.StampedMetadata(e, versions))
		if err != nil {
			return nil, fmt.Errorf("append %s: marshal metadata of event %d: %w", stream, i, err)
		}
		ids[i] = e.ID.String()
		types[i] = e.Type
		data[i] = e.Data
		meta[i] = md
	}
	return []any{stream, int64(expected), pq.Array(ids), pq.Array(types), arrayLiteral(data), arrayLiteral(meta)}, nil
}

// arrayLiteral is items as a PostgreSQL array literal of quoted elements,
// built in one allocation: the payloads of every append pass through it,
// and pq.Array copied each of them three times on the way (to a string
// of its own, into the literal, and the literal into a string).
func arrayLiteral(items [][]byte) string {
	n := 2 + len(items)
	for _, it := range items {
		n += len(it) + 2 + bytes.Count(it, []byte{'"'}) + bytes.Count(it, []byte{'\\'})
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for {
			j := bytes.IndexAny(it, `"\`)
			if j < 0 {
				b.Write(it)
				break
			}
			b.Write(it[:j])
			b.WriteByte('\\')
			b.WriteByte(it[j])
			it = it[j+1:]
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func (s *Store) appendOnce(ctx context.Context, stream string, expected eventstore.ExpectedVersion, args []any, n int) (in inserted, err error) {
	if !eventstore.HasBeforeCommit(ctx) {
		return s.appendStatement(ctx, stream, expected, args, n)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return in, fmt.Errorf("append %s: begin: %w", stream, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if in, err = s.checked(ctx, tx.StmtContext(ctx, s.appendStmt), stream, expected, args, n); err != nil {
		return in, err
	}
	if err := eventstore.BeforeCommit(ctx); err != nil {
		return in, fmt.Errorf("append %s: %w", stream, err)
	}
	if err := tx.Commit(); err != nil {
		return in, fmt.Errorf("append %s: commit: %w", stream, err)
	}
	return in, nil
}

// appendStatement runs appendSQL on its own, without BEGIN and COMMIT: one
// statement is one transaction, atomic and checked just the same, and it
// saves the explicit transaction's round trips (measured at about half the
// cost of a single-event append). The INSERT still assigns the xid.
func (s *Store) appendStatement(ctx context.Context, stream string, expected eventstore.ExpectedVersion, args []any, n int) (inserted, error) {
	return s.checked(ctx, s.appendStmt, stream, expected, args, n)
}

// checked runs appendSQL and turns a version that did not match into a
// *eventstore.ConcurrencyError.
func (s *Store) checked(ctx context.Context, stmt *sql.Stmt, stream string, expected eventstore.ExpectedVersion, args []any, n int) (inserted, error) {
	in, err := insertEvents(ctx, stmt, args, n)
	if err != nil {
		if isViolation(err, "events_stream_version_key") {
			return in, s.conflict(ctx, stream, expected)
		}
		return in, fmt.Errorf("append %s: %w", stream, err)
	}
	if in.positions == nil {
		return in, &eventstore.ConcurrencyError{Stream: stream, Expected: expected, Actual: in.seen}
	}
	return in, nil
}

// result is the AppendResult of n events inserted after version seen.
func (in inserted) result(n int) eventstore.AppendResult {
	return eventstore.AppendResult{FromVersion: in.seen + 1, ToVersion: in.seen + int64(n), Positions: in.positions}
}

// inserted is what appendSQL returned: the version it saw, the positions
// and recording times in version order (nil positions if the expected
// version did not match), and the delivery predecessor when known.
type inserted struct {
	seen      int64
	positions []int64
	at        []time.Time
	prev      sql.NullInt64
}

// insertEvents runs appendSQL.
func insertEvents(ctx context.Context, stmt *sql.Stmt, args []any, n int) (in inserted, err error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return in, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			pos, version sql.NullInt64
			recorded     sql.NullTime
		)
		if err := rows.Scan(&in.seen, &pos, &version, &recorded, &in.prev); err != nil {
			return inserted{}, err
		}
		if pos.Valid {
			in.positions = append(in.positions, pos.Int64)
			in.at = append(in.at, recorded.Time)
		}
	}
	if err := rows.Err(); err != nil {
		return inserted{}, err
	}
	if in.positions != nil && len(in.positions) != n {
		return inserted{}, fmt.Errorf("inserted %d of %d events", len(in.positions), n)
	}
	return in, nil
}

// conflict builds the error for a lost race on the next version number,
// reading the version the winner left.
func (s *Store) conflict(ctx context.Context, stream string, expected eventstore.ExpectedVersion) error {
	s.cache.Drop(stream) // the database moved on: read it, not the copy
	actual, err := s.StreamVersion(ctx, stream)
	if err != nil {
		return fmt.Errorf("append %s: version conflict, then: %w", stream, err)
	}
	return &eventstore.ConcurrencyError{Stream: stream, Expected: expected, Actual: actual}
}

func isViolation(err error, constraint string) bool {
	pqErr := pq.As(err, pqerror.UniqueViolation)
	return pqErr != nil && pqErr.Constraint == constraint
}
