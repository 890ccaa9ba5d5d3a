// Package duework is the clock of time-driven work: it knows when each
// item of due work (a task now; heartbeat cycles and self-heal iterations
// later) next falls due, sleeps until exactly then and hands the item to
// the handler registered for its kind. Handlers run as watermill router
// handlers, behind the router's middleware (recoverer, retry with backoff,
// poison queue recorded as events).
//
// The clock is a hint, not a source of truth: an item's due time comes
// from the log (through whoever calls Set), and a handler decides from the
// item's own stream whether there is anything to do. Firing exactly once
// across processes is the handler's claim, not the clock's.
package duework

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// Item is one piece of due work.
type Item struct {
	Kind string    `json:"kind"`
	ID   string    `json:"id"`
	Due  time.Time `json:"due"`
}

// Handler does the work of one due item. An error is retried with backoff
// by the router's middleware and, when the retries are spent, recorded by
// its poison queue.
type Handler func(ctx context.Context, it Item) error

// Router is where handlers are registered: watermill's router.
type Router interface {
	AddNoPublisherHandler(name, topic string, sub message.Subscriber, h message.NoPublishHandlerFunc) *message.Handler
}

// Clock sleeps until the next due item and dispatches it.
type Clock struct {
	router Router
	logger *slog.Logger
	pubsub *gochannel.GoChannel
	now    func() time.Time

	mu    sync.Mutex
	due   map[key]time.Time
	queue queue
	kinds map[string]bool
	wake  chan struct{}
}

type key struct{ kind, id string }

// Options tunes a clock.
type Options struct {
	// Now replaces the wall clock (tests).
	Now func() time.Time
}

// New returns a clock whose handlers run on router.
func New(router Router, logger *slog.Logger, opts Options) (*Clock, error) {
	if router == nil || logger == nil {
		return nil, errors.New("duework: router and logger are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// In-process delivery: due work is found by each process's own clock,
	// so there is nothing to carry between processes, and a poll-based
	// transport would add its interval to every firing.
	ps := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: 1024}, watermill.NopLogger{})
	return &Clock{
		router: router, logger: logger, pubsub: ps, now: opts.Now,
		due: map[key]time.Time{}, kinds: map[string]bool{}, wake: make(chan struct{}, 1),
	}, nil
}

// Handle registers the handler of one kind of work. Register every kind
// before the router runs.
func (c *Clock) Handle(kind string, h Handler) error {
	if kind == "" || h == nil {
		return errors.New("duework: kind and handler are required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kinds[kind] {
		return fmt.Errorf("duework: kind %s registered twice", kind)
	}
	c.kinds[kind] = true
	// One subscription per kind is enough: the router runs every message
	// it receives in a goroutine of its own, so items never wait for each
	// other (a handler that must not overlap itself takes a lease).
	name := topic(kind)
	c.router.AddNoPublisherHandler(name, name, c.pubsub, func(msg *message.Message) error {
		var it Item
		if err := json.Unmarshal(msg.Payload, &it); err != nil {
			return fmt.Errorf("duework: bad item %q: %w", msg.Payload, err)
		}
		return h(msg.Context(), it)
	})
	return nil
}

// Set records when an item falls due (replacing what was known) and wakes
// the clock if that is sooner than it planned to wake.
func (c *Clock) Set(it Item) {
	c.mu.Lock()
	k := key{it.Kind, it.ID}
	if old, ok := c.due[k]; ok && old.Equal(it.Due) {
		c.mu.Unlock()
		return
	}
	c.due[k] = it.Due
	heap.Push(&c.queue, entry{key: k, due: it.Due})
	c.mu.Unlock()
	c.poke()
}

// Remove forgets an item (cancelled, settled).
func (c *Clock) Remove(kind, id string) {
	c.mu.Lock()
	delete(c.due, key{kind, id})
	c.mu.Unlock()
}

// Len is how many items the clock is waiting for.
func (c *Clock) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.due)
}

func (c *Clock) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Run dispatches items as they fall due until ctx ends. It sleeps on a
// timer set to the earliest due time; Set wakes it early.
func (c *Clock) Run(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due, next, ok := c.take()
		for _, it := range due {
			if err := c.dispatch(it); err != nil {
				c.logger.Error("due work not dispatched", "kind", it.Kind, "id", it.ID, "err", err)
			}
		}
		timer.Stop()
		var fire <-chan time.Time
		if ok {
			timer.Reset(max(next.Sub(c.now()), 0))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.wake:
		case <-fire:
		}
	}
}

// take removes and returns the items due now, and says when the next one
// falls due.
func (c *Clock) take() ([]Item, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	var out []Item
	for c.queue.Len() > 0 {
		top := c.queue[0]
		if due, ok := c.due[top.key]; !ok || !due.Equal(top.due) {
			heap.Pop(&c.queue) // replaced or removed since it was queued
			continue
		}
		if top.due.After(now) {
			return out, top.due, true
		}
		heap.Pop(&c.queue)
		delete(c.due, top.key)
		out = append(out, Item{Kind: top.key.kind, ID: top.key.id, Due: top.due})
	}
	return out, time.Time{}, false
}

func (c *Clock) dispatch(it Item) error {
	data, err := json.Marshal(it)
	if err != nil {
		return err
	}
	return c.pubsub.Publish(topic(it.Kind), message.NewMessage(watermill.NewUUID(), data))
}

func topic(kind string) string { return "duework." + kind }

// Close releases the in-process transport; call it after the router stopped.
func (c *Clock) Close() error { return c.pubsub.Close() }

type entry struct {
	key key
	due time.Time
}

// queue is a min-heap of due times; entries whose item was replaced or
// removed are dropped when they reach the top.
type queue []entry

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q queue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)        { *q = append(*q, x.(entry)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
