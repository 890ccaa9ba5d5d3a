package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

const selectVersion = `SELECT COALESCE(MAX(version), 0) FROM events WHERE stream_id = ?`

// selectLast is the position the appended events follow in the delivery
// order: with the write lock held, nothing else can commit in between.
const selectLast = `SELECT COALESCE(MAX(position), 0) FROM events`

const insertEvent = `INSERT INTO events (stream_id, version, event_id, type, data, metadata, recorded_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`

// Append implements eventstore.Store.
func (s *Store) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, events ...domain.NewEvent) (eventstore.AppendResult, error) {
	if err := eventstore.Validate(stream, expected, events); err != nil {
		return eventstore.AppendResult{}, err
	}
	rows, err := encodeEvents(stream, events, s.versions)
	if err != nil {
		return eventstore.AppendResult{}, err
	}
	st, err := s.appendStatements(ctx)
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("append %s: %w", stream, err)
	}
	// The write pool begins IMMEDIATE: the version read below already holds
	// the write lock, so no other writer can move the stream before commit.
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("append %s: begin: %w", stream, err)
	}
	res, at, prev, err := st.appendTx(ctx, tx, stream, expected, rows)
	if err == nil {
		err = eventstore.BeforeCommit(ctx)
	}
	if err != nil {
		_ = tx.Rollback()
		if errors.Is(err, eventstore.ErrConcurrency) {
			s.cache.Drop(stream)
		}
		return eventstore.AppendResult{}, err
	}
	if err := tx.Commit(); err != nil {
		s.cache.Drop(stream)
		return eventstore.AppendResult{}, fmt.Errorf("append %s: commit: %w", stream, err)
	}
	ats := make([]time.Time, len(events))
	for i := range ats {
		ats[i] = at
	}
	recorded := eventstore.Recorded(stream, events, res, ats, s.versions)
	s.cache.Committed(stream, recorded)
	if recorded == nil || s.tail == nil || !s.tail.Delivered(prev, recorded) {
		s.unread.Notify()
	}
	s.bcast.Notify()
	return res, nil
}

// eventRow is a NewEvent encoded for its row, prepared outside the
// transaction so that the write lock is held as briefly as possible.
type eventRow struct {
	id       string
	typ      string
	data     string
	metadata string
}

func encodeEvents(stream string, events []domain.NewEvent, versions eventstore.SchemaVersions) ([]eventRow, error) {
	rows := make([]eventRow, len(events))
	for i, e := range events {
		md, err := json.Marshal(eventstore.StampedMetadata(e, versions))
		if err != nil {
			return nil, fmt.Errorf("append %s: event %s metadata: %w", stream, e.ID, err)
		}
		if !json.Valid(e.Data) {
			return nil, fmt.Errorf("append %s: %w: event %d (%s) data is not JSON", stream, eventstore.ErrInvalidAppend, i, e.Type)
		}
		rows[i] = eventRow{id: e.ID.String(), typ: e.Type, data: string(e.Data), metadata: string(md)}
	}
	return rows, nil
}

// appendStmts are prepared once on the write pool's single connection, so
// appends skip SQL compilation while they hold the write lock.
type appendStmts struct {
	version, last, insert *sql.Stmt
}

// appendStatements prepares lazily rather than in Open: with SkipMigrate the
// events table may not exist yet.
func (s *Store) appendStatements(ctx context.Context) (*appendStmts, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.stmts != nil {
		return s.stmts, nil
	}
	version, err := s.write.PrepareContext(ctx, selectVersion)
	if err != nil {
		return nil, fmt.Errorf("prepare version query: %w", err)
	}
	last, err := s.write.PrepareContext(ctx, selectLast)
	if err != nil {
		version.Close()
		return nil, fmt.Errorf("prepare last position query: %w", err)
	}
	insert, err := s.write.PrepareContext(ctx, insertEvent)
	if err != nil {
		version.Close()
		last.Close()
		return nil, fmt.Errorf("prepare insert: %w", err)
	}
	s.stmts = &appendStmts{version: version, last: last, insert: insert}
	return s.stmts, nil
}

func (st *appendStmts) close() error {
	if st == nil {
		return nil
	}
	return errors.Join(st.version.Close(), st.last.Close(), st.insert.Close())
}

// appendTx inserts the rows and returns what it wrote, the recording time
// of every row (as a read returns it) and the position they follow in the
// delivery order.
func (st *appendStmts) appendTx(ctx context.Context, tx *sql.Tx, stream string, expected eventstore.ExpectedVersion, rows []eventRow) (res eventstore.AppendResult, at time.Time, prev int64, err error) {
	var current int64
	if err := tx.StmtContext(ctx, st.version).QueryRowContext(ctx, stream).Scan(&current); err != nil {
		return res, at, 0, fmt.Errorf("append %s: read version: %w", stream, err)
	}
	if expected != eventstore.Any && int64(expected) != current {
		return res, at, 0, &eventstore.ConcurrencyError{Stream: stream, Expected: expected, Actual: current}
	}
	if err := tx.StmtContext(ctx, st.last).QueryRowContext(ctx).Scan(&prev); err != nil {
		return res, at, 0, fmt.Errorf("append %s: read last position: %w", stream, err)
	}
	insert := tx.StmtContext(ctx, st.insert)
	now := time.Now().UnixMicro()
	res = eventstore.AppendResult{FromVersion: current + 1, ToVersion: current + int64(len(rows)), Positions: make([]int64, len(rows))}
	for i, r := range rows {
		// A duplicate event id fails here with SQLite's "UNIQUE constraint
		// failed: events.event_id"; the rollback leaves nothing behind.
		out, err := insert.ExecContext(ctx, stream, current+1+int64(i), r.id, r.typ, r.data, r.metadata, now)
		if err != nil {
			return eventstore.AppendResult{}, at, 0, fmt.Errorf("append %s: insert event %s: %w", stream, r.id, err)
		}
		if res.Positions[i], err = out.LastInsertId(); err != nil {
			return eventstore.AppendResult{}, at, 0, fmt.Errorf("append %s: position of event %s: %w", stream, r.id, err)
		}
	}
	return res, time.UnixMicro(now).UTC(), prev, nil
}
