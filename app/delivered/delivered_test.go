package delivered_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app/delivered"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// streams is a store double: each turn's stream ends with the event type
// set for it.
type streams struct {
	mu   sync.Mutex
	last map[string]string
	err  error
}

func (s *streams) Load(_ context.Context, stream string, _ int64) ([]domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	typ, ok := s.last[stream]
	if !ok {
		return nil, nil
	}
	return []domain.Event{{StreamID: stream, Type: typ}}, nil
}

func (s *streams) set(id, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[domain.TurnStream(id)] = typ
}

// WaitIdle returns only once every tracked turn's stream ends with its
// completion, and at once when nothing was tracked.
func TestWaitIdleWaitsForEveryTrackedTurn(t *testing.T) {
	ctx := context.Background()
	s := &streams{last: map[string]string{}}
	d, err := delivered.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WaitIdle(ctx); err != nil {
		t.Fatalf("nothing tracked: %v", err)
	}
	d.Track(ctx, "a")
	d.Track(ctx, "b")
	s.set("a", turn.TurnCompleted{}.EventType())
	s.set("b", "MessageReceived")

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := d.WaitIdle(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("turn b still open: WaitIdle = %v, want the deadline", err)
	}
	s.set("b", turn.TurnCompleted{}.EventType())
	if err := d.WaitIdle(ctx); err != nil {
		t.Fatalf("both completed: %v", err)
	}
}

// A failed read is WaitIdle's error, not a wait forever.
func TestWaitIdleReportsAFailedRead(t *testing.T) {
	ctx := context.Background()
	closed := errors.New("store closed")
	s := &streams{last: map[string]string{}, err: closed}
	d, err := delivered.New(s)
	if err != nil {
		t.Fatal(err)
	}
	d.Track(ctx, "a")
	if err := d.WaitIdle(ctx); !errors.Is(err, closed) {
		t.Fatalf("WaitIdle = %v, want the read's error", err)
	}
}

func TestNewNeedsAStore(t *testing.T) {
	if _, err := delivered.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}
