package eventstore

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// outageStore fails its first reads, like a database that restarts, then
// serves its events.
type outageStore struct {
	Store
	mu    sync.Mutex
	fails int
	tail  *Tail
	evs   []domain.Event
}

func (s *outageStore) ReadAll(_ context.Context, after int64, limit int) ([]domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		return nil, errors.New("pq: the database system is shutting down (57P03)")
	}
	var out []domain.Event
	for _, e := range s.evs {
		if e.Position > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *outageStore) Changes(context.Context) <-chan struct{} { return nil }

func (s *outageStore) Tail() *Tail { return s.tail }

// A follower whose reads fail for a while (the database restarts) keeps
// following and sees the log once the reads succeed, with or without a
// shared Tail.
func TestFollowOutlivesFailedReads(t *testing.T) {
	for _, shared := range []bool{false, true} {
		s := &outageStore{fails: 3, evs: []domain.Event{{Position: 1, StreamID: "s"}, {Position: 2, StreamID: "s"}}}
		if shared {
			s.tail = NewTail(s.ReadAll, s.Changes)
		}
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan int64, 2)
		done := make(chan error, 1)
		go func() {
			done <- Follow(ctx, s, 0, FollowOptions{Name: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
				func(_ context.Context, evs []domain.Event) (int64, error) {
					for _, e := range evs {
						got <- e.Position
					}
					return evs[len(evs)-1].Position, nil
				})
		}()
		for want := int64(1); want <= 2; want++ {
			select {
			case p := <-got:
				if p != want {
					t.Fatalf("shared=%v: got position %d, want %d", shared, p, want)
				}
			case err := <-done:
				t.Fatalf("shared=%v: follow ended: %v", shared, err)
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("shared=%v: follow ended with %v", shared, err)
		}
	}
}
