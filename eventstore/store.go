// Package eventstore defines the append-only event log omega keeps all its
// facts in, and the delivery of that log to named consumers. Backends live
// in the postgres and sqlite subpackages; storetest holds the conformance
// suite both must pass.
package eventstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/domain"
)

// ExpectedVersion is the stream version an append expects to find.
type ExpectedVersion int64

const (
	// Any appends whatever the stream's version is.
	Any ExpectedVersion = -1
	// NoStream requires that the stream has no events yet.
	NoStream ExpectedVersion = 0
)

// Exact requires the stream to be at version v (v=0 is NoStream).
func Exact(v int64) ExpectedVersion { return ExpectedVersion(v) }

func (e ExpectedVersion) String() string {
	switch e {
	case Any:
		return "any"
	case NoStream:
		return "no stream"
	default:
		return fmt.Sprintf("version %d", int64(e))
	}
}

// ErrConcurrency is wrapped by every ConcurrencyError.
var ErrConcurrency = errors.New("concurrency conflict")

// ErrInvalidAppend is returned for appends that can never succeed.
var ErrInvalidAppend = errors.New("invalid append")

// ConcurrencyError reports that a stream was not at the expected version.
type ConcurrencyError struct {
	Stream   string
	Expected ExpectedVersion
	Actual   int64
}

func (e *ConcurrencyError) Error() string {
	return fmt.Sprintf("append %s: expected %s, stream is at version %d: %v", e.Stream, e.Expected, e.Actual, ErrConcurrency)
}

func (e *ConcurrencyError) Unwrap() error { return ErrConcurrency }

// AppendResult describes what an append wrote.
type AppendResult struct {
	// FromVersion and ToVersion are the stream versions of the first and
	// last appended event.
	FromVersion, ToVersion int64
	// Positions are the global positions of the appended events.
	Positions []int64
}

// Store is the event log.
type Store interface {
	// Append writes events to one stream atomically, checking the expected
	// version. A conflicting writer gets a *ConcurrencyError.
	Append(ctx context.Context, stream string, expected ExpectedVersion, events ...domain.NewEvent) (AppendResult, error)
	// Load returns the stream's events with version >= fromVersion. They
	// may be shared with the store's cache and other readers: callers
	// read them and never change them.
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
	// StreamVersion returns the stream's current version (0 if none).
	StreamVersion(ctx context.Context, stream string) (int64, error)
	// ReadAll returns up to limit committed events that follow the event at
	// position after in the global delivery order (after=0: from the start).
	// It never returns an event while an earlier one in that order may still
	// commit, so a reader that keeps the last position it saw misses nothing.
	ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error)
	// Settle returns once ReadAll returns every event committed before the
	// call: a backend that holds events back while earlier transactions
	// may still commit waits for those to end (or for ctx).
	Settle(ctx context.Context) error
	// Changes returns a channel that receives (coalesced, best-effort)
	// signals that new events may be readable. It closes when ctx ends.
	Changes(ctx context.Context) <-chan struct{}
	// Backend names the implementation ("postgres" or "sqlite").
	Backend() string
	Close() error
}

// SchemaVersions knows the current schema version of each event type (the
// domain registry). A store given one stamps it on every event it appends,
// so the version is set in exactly one place whoever created the event.
type SchemaVersions interface {
	SchemaVersion(eventType string) int
}

// StampedMetadata returns e's metadata carrying the schema version e is
// written at. A version the caller set is kept (an import copying old
// events); nil versions leave the metadata alone, which readers take as 1.
func StampedMetadata(e domain.NewEvent, versions SchemaVersions) domain.Metadata {
	md := e.Metadata
	if md.SchemaVersion == 0 && versions != nil {
		if v := versions.SchemaVersion(e.Type); v > 0 {
			md.SchemaVersion = v
		}
	}
	return md
}

// Validate checks an append's arguments before any I/O.
func Validate(stream string, expected ExpectedVersion, events []domain.NewEvent) error {
	if stream == "" {
		return fmt.Errorf("%w: empty stream id", ErrInvalidAppend)
	}
	if expected < Any {
		return fmt.Errorf("append %s: %w: expected version %d", stream, ErrInvalidAppend, int64(expected))
	}
	if len(events) == 0 {
		return fmt.Errorf("append %s: %w: no events", stream, ErrInvalidAppend)
	}
	for i, e := range events {
		if e.Type == "" {
			return fmt.Errorf("append %s: %w: event %d has no type", stream, ErrInvalidAppend, i)
		}
		if len(e.Data) == 0 {
			return fmt.Errorf("append %s: %w: event %d (%s) has no data", stream, ErrInvalidAppend, i, e.Type)
		}
	}
	return nil
}

type hookKey struct{}

// WithBeforeCommit returns a context whose appends call hook after their
// rows are written and before the transaction commits; a non-nil error
// rolls the append back. It exists so tests can hold transactions open and
// reorder commits; production code never sets it.
func WithBeforeCommit(ctx context.Context, hook func() error) context.Context {
	return context.WithValue(ctx, hookKey{}, hook)
}

// HasBeforeCommit reports whether ctx carries a hook, so a backend can
// skip an explicit transaction when nothing needs to run inside it.
func HasBeforeCommit(ctx context.Context) bool {
	hook, ok := ctx.Value(hookKey{}).(func() error)
	return ok && hook != nil
}

// BeforeCommit runs the hook set by WithBeforeCommit, if any.
func BeforeCommit(ctx context.Context) error {
	if hook, ok := ctx.Value(hookKey{}).(func() error); ok && hook != nil {
		return hook()
	}
	return nil
}
