package api

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// turnWatcher follows the log once for every request waiting on a turn
// and wakes a request only when its turn completes. (Each waiter reading
// its own turn on every change cost hundreds of reads per turn under load.)
type turnWatcher struct {
	store  eventstore.Store
	logger *slog.Logger

	mu      sync.Mutex
	ctx     context.Context
	running bool
	waiters map[string][]chan struct{} // turn stream -> waiters
	// recent are the last streams seen completing, oldest first, so that
	// a request registering just after its turn's completion went past
	// is woken at once without reading its turn again.
	recent    []string
	completed map[string]bool
}

// recentCompletions bounds turnWatcher.recent: far more turns than can
// complete between a request's read of its turn and its registration.
const recentCompletions = 4096

// watch returns a channel closed when the stream records TurnCompleted.
// from is the position of an event of the stream already on record: the
// follower, if it is not running yet, starts after it, and every later
// event of any waited-for turn comes after it in delivery order.
func (w *turnWatcher) watch(stream string, from int64) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiters == nil {
		w.waiters = map[string][]chan struct{}{}
	}
	if w.completed[stream] {
		close(ch)
		return ch, func() {}
	}
	w.waiters[stream] = append(w.waiters[stream], ch)
	if !w.running && w.ctx != nil {
		w.running = true
		go w.run(w.ctx, from)
	}
	return ch, func() { w.forget(stream, ch) }
}

func (w *turnWatcher) forget(stream string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.waiters[stream]
	for i, c := range list {
		if c == ch {
			w.waiters[stream] = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(w.waiters[stream]) == 0 {
		delete(w.waiters, stream)
	}
}

func (w *turnWatcher) run(ctx context.Context, after int64) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := eventstore.Follow(ctx, w.store, after, eventstore.FollowOptions{BatchSize: 500, PollInterval: 100 * time.Millisecond, Name: "reply watcher", Logger: w.logger},
			func(_ context.Context, evs []domain.Event) (int64, error) {
				w.mu.Lock()
				for _, e := range evs {
					if e.Type != (turn.TurnCompleted{}).EventType() {
						continue
					}
					for _, ch := range w.waiters[e.StreamID] {
						close(ch)
					}
					delete(w.waiters, e.StreamID)
					w.remember(e.StreamID)
				}
				w.mu.Unlock()
				after = evs[len(evs)-1].Position
				backoff = 100 * time.Millisecond
				return after, nil
			})
		if ctx.Err() != nil {
			break
		}
		w.logger.Error("http channel: following the log for replies failed; retrying", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
	w.mu.Lock()
	w.running = false
	w.mu.Unlock()
}

// remember notes that stream completed; w.mu is held.
func (w *turnWatcher) remember(stream string) {
	if w.completed == nil {
		w.completed = map[string]bool{}
	}
	if len(w.recent) == recentCompletions {
		delete(w.completed, w.recent[0])
		w.recent = w.recent[1:]
	}
	w.recent = append(w.recent, stream)
	w.completed[stream] = true
}
