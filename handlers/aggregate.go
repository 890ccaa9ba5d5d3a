// Package handlers holds omega's command handlers and process managers.
// A command handler loads an aggregate's stream, folds it into state,
// decides the new events with pure domain code and appends them with the
// version it read, retrying when another writer got there first.
package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// maxConflictRetries bounds how often a command re-reads a stream that
// another writer changed under it.
const maxConflictRetries = 5

// Folder is the state of an aggregate.
type Folder interface {
	Apply(p domain.Payload, version int64, e domain.Event)
}

// LoadState folds a whole stream into state and returns its version.
func LoadState(ctx context.Context, store eventstore.Store, reg *domain.Registry, stream string, state Folder) (int64, error) {
	evs, err := store.Load(ctx, stream, 1)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", stream, err)
	}
	var version int64
	for _, e := range evs {
		p, err := reg.Decode(e)
		if err != nil {
			return 0, fmt.Errorf("load %s: %w", stream, err)
		}
		state.Apply(p, e.Version, e)
		version = e.Version
	}
	return version, nil
}

// Update runs the load-decide-append cycle on one stream. newState returns
// a fresh zero state for each attempt.
func Update[S Folder](ctx context.Context, store eventstore.Store, reg *domain.Registry, stream string, md domain.Metadata,
	newState func() S, decide func(S) ([]domain.Payload, error)) (S, eventstore.AppendResult, error) {
	var res eventstore.AppendResult
	for attempt := 0; ; attempt++ {
		state := newState()
		version, err := LoadState(ctx, store, reg, stream, state)
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
		res, err = store.Append(ctx, stream, eventstore.Exact(version), events...)
		if errors.Is(err, eventstore.ErrConcurrency) && attempt < maxConflictRetries {
			continue
		}
		if err != nil {
			return state, res, err
		}
		for i, p := range payloads {
			state.Apply(p, res.FromVersion+int64(i), domain.Event{})
		}
		return state, res, nil
	}
}
