package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Aggregate is domain state folded from a stream's payloads.
type Aggregate interface {
	Apply(p domain.Payload, version int64, recordedAt time.Time)
}

// Observer is an Aggregate that also needs each event's envelope (its
// metadata), not only its payload.
type Observer interface {
	Observe(e domain.Event)
}

// maxConflictRetries bounds how often Update re-reads a stream that
// another writer changed under it.
const maxConflictRetries = 5

// Fold applies a whole stream to state and returns the stream's version
// (0: no stream), the version to append after.
func Fold(ctx context.Context, s Store, reg *domain.Registry, stream string, state Aggregate) (int64, error) {
	return FoldUntil(ctx, s, reg, stream, state, nil)
}

// FoldUntil is Fold of the stream as it stood before its first event that
// keep refuses (nil keeps them all): the state of any earlier moment is
// the same fold stopped sooner, so it can never disagree with what the
// fold said at that moment.
func FoldUntil(ctx context.Context, s Store, reg *domain.Registry, stream string, state Aggregate, keep func(domain.Event) bool) (int64, error) {
	evs, err := s.Load(ctx, stream, 1)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", stream, err)
	}
	obs, _ := state.(Observer)
	var version int64
	for _, e := range evs {
		if keep != nil && !keep(e) {
			break
		}
		p, err := reg.Decode(e)
		if err != nil {
			return 0, fmt.Errorf("decode %s@%d: %w", stream, e.Version, err)
		}
		version = e.Version
		if obs != nil {
			obs.Observe(e)
		}
		state.Apply(p, version, e.RecordedAt)
	}
	return version, nil
}

// Update runs the load-decide-append cycle of a command on one stream:
// fold the stream, decide the new events from its state, append them at
// the version read, and start over when another writer got there first.
// newState returns a fresh zero state for each attempt; the returned
// state includes the appended events.
func Update[S Aggregate](ctx context.Context, s Store, reg *domain.Registry, stream string, md domain.Metadata,
	newState func() S, decide func(S) ([]domain.Payload, error)) (S, AppendResult, error) {
	var res AppendResult
	for attempt := 0; ; attempt++ {
		state := newState()
		version, err := Fold(ctx, s, reg, stream, state)
		if err != nil {
			return state, res, err
		}
		payloads, err := decide(state)
		if err != nil || len(payloads) == 0 {
			return state, res, err
		}
		events, err := domain.NewEvents(md, payloads...)
		if err != nil {
			return state, res, err
		}
		res, err = s.Append(ctx, stream, Exact(version), events...)
		if errors.Is(err, ErrConcurrency) && attempt < maxConflictRetries {
			continue
		}
		if err != nil {
			return state, res, fmt.Errorf("append to %s: %w", stream, err)
		}
		for i, p := range payloads {
			state.Apply(p, res.FromVersion+int64(i), time.Time{})
		}
		return state, res, nil
	}
}
