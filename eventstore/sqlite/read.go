package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

const eventColumns = `position, stream_id, version, event_id, type, data, metadata, recorded_at`

// Load implements eventstore.Store.
func (s *Store) Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error) {
	if !eventstore.ReadsFresh(ctx) {
		if evs, ok := s.cache.Load(stream, fromVersion); ok {
			return evs, nil
		}
	}
	tok := s.cache.Token()
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+eventColumns+` FROM events WHERE stream_id = ? AND version >= ? ORDER BY version`,
		stream, fromVersion)
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
	err := s.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM events WHERE stream_id = ?`, stream).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("stream version %s: %w", stream, err)
	}
	s.cache.VersionRead(tok, stream, v)
	return v, nil
}

// ReadAll implements eventstore.Store. Position order is commit order here
// (see the package documentation), so every snapshot is a prefix of the log.
func (s *Store) ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error) {
	events, err := s.readAll(ctx, after, limit)
	if err == nil {
		// Not the Tail's read (the Tail tells the cache itself).
		s.cache.Observe(events)
	}
	return events, err
}

// readAll is ReadAll for the Tail.
func (s *Store) readAll(ctx context.Context, after int64, limit int) ([]domain.Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("read all after %d: limit %d is not positive", after, limit)
	}
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+eventColumns+` FROM events WHERE position > ? ORDER BY position LIMIT ?`,
		after, limit)
	if err != nil {
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	events, err := scanEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("read all after %d: %w", after, err)
	}
	return events, nil
}

func scanEvents(rows *sql.Rows) ([]domain.Event, error) {
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var (
			e          domain.Event
			id         string
			data, md   []byte
			recordedAt int64
		)
		if err := rows.Scan(&e.Position, &e.StreamID, &e.Version, &id, &e.Type, &data, &md, &recordedAt); err != nil {
			return nil, fmt.Errorf("scan event: %w", err)
		}
		var err error
		if e.ID, err = uuid.Parse(id); err != nil {
			return nil, fmt.Errorf("event at position %d: id %q: %w", e.Position, id, err)
		}
		if err := json.Unmarshal(md, &e.Metadata); err != nil {
			return nil, fmt.Errorf("event at position %d: metadata: %w", e.Position, err)
		}
		e.Data = data
		e.RecordedAt = time.UnixMicro(recordedAt).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadCached implements eventstore.CachedLoader.
func (s *Store) LoadCached(stream string) ([]domain.Event, bool) { return s.cache.Load(stream, 1) }

// WatchCached implements eventstore.CachedLoader.
func (s *Store) WatchCached(stream string) (<-chan struct{}, func()) { return s.cache.Watch(stream) }

// DropCached forgets the in-memory copy of a stream. Only a tool that
// rewrote the stream's rows behind the store's back needs it (tests of
// old event shapes do); the log is append-only otherwise.
func (s *Store) DropCached(stream string) { s.cache.Drop(stream) }

// Settle implements eventstore.Store: a committed event is readable at
// once, since positions are assigned in commit order.
func (s *Store) Settle(context.Context) error { return nil }
