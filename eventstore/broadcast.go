package eventstore

import (
	"context"
	"sync"
)

// Broadcaster fans change signals out to every Changes channel. Signals
// coalesce: a slow reader sees one pending signal, never a backlog.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives signals until ctx ends.
func (b *Broadcaster) Subscribe(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	// Not a goroutine per subscriber: a thousand waiting chat workers
	// subscribe, and each goroutine's stack is scanned at every collection.
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	})
	return ch
}

// Notify signals every subscriber without blocking.
func (b *Broadcaster) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
