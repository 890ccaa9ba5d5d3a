// Package delivered remembers the turns a process received until they
// complete, so that a caller (a terminal chat, a test) can wait for the
// process to be idle.
package delivered

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/internal/wait"
)

// receivedCap bounds the turns remembered: past it the completed ones are
// forgotten, so a server that never waits does not remember every turn of
// its life.
const receivedCap = 1024

// Loader reads a turn's stream (the event store).
type Loader interface {
	Load(ctx context.Context, stream string, from int64) ([]domain.Event, error)
}

// Turns are the turns received here and not yet seen completed.
type Turns struct {
	store    Loader
	mu       sync.Mutex
	received []string
}

// New checks the store the turns' completion is read from.
func New(store Loader) (*Turns, error) {
	if store == nil {
		return nil, errors.New("delivered: the turns need a store to read their completion from")
	}
	return &Turns{store: store}, nil
}

// Track remembers a turn just received.
func (t *Turns) Track(ctx context.Context, id string) {
	t.mu.Lock()
	t.received = append(t.received, id)
	full := len(t.received) >= receivedCap
	t.mu.Unlock()
	if full {
		t.forgetCompleted(ctx)
	}
}

// forgetCompleted drops the remembered turns that have completed.
func (t *Turns) forgetCompleted(ctx context.Context) {
	done := map[string]bool{}
	for _, id := range t.snapshot() {
		if ok, err := t.completed(ctx, id); err == nil && ok {
			done[id] = true
		}
	}
	t.mu.Lock()
	t.received = slices.DeleteFunc(t.received, func(id string) bool { return done[id] })
	t.mu.Unlock()
}

func (t *Turns) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.received...)
}

// WaitIdle waits until every tracked turn has completed.
func (t *Turns) WaitIdle(ctx context.Context) error {
	for _, id := range t.snapshot() {
		for {
			done, err := t.completed(ctx, id)
			if err != nil {
				return err
			}
			if done {
				break
			}
			if err := wait.Sleep(ctx, 50*time.Millisecond); err != nil {
				return err
			}
		}
	}
	t.forgetCompleted(ctx)
	return nil
}

func (t *Turns) completed(ctx context.Context, id string) (bool, error) {
	evs, err := t.store.Load(ctx, domain.TurnStream(id), 1)
	if err != nil {
		return false, fmt.Errorf("read turn %s: %w", id, err)
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == turn.TurnCompleted{}.EventType(), nil
}
