package eventstore

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A subscription costs no goroutine while it lasts (a thousand waiting
// chat workers subscribe at once), receives signals, and is gone once
// its context ends.
func TestBroadcasterSubscriptionsLastTheirContext(t *testing.T) {
	var b Broadcaster
	ctx, cancel := context.WithCancel(context.Background())
	before := runtime.NumGoroutine()
	const subscribers = 1000
	chans := make([]<-chan struct{}, subscribers)
	for i := range chans {
		chans[i] = b.Subscribe(ctx)
	}
	if grew := runtime.NumGoroutine() - before; grew > 10 {
		t.Fatalf("%d subscriptions started %d goroutines", subscribers, grew)
	}
	b.Notify()
	for i, ch := range chans {
		select {
		case <-ch:
		default:
			t.Fatalf("subscriber %d missed the signal", i)
		}
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		left := len(b.subs)
		b.mu.Unlock()
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions left after their context ended", left)
		}
		time.Sleep(time.Millisecond)
	}
}
