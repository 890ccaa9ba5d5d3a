package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// BenchmarkPlacedInTheLog measures what a turn waits for before it runs:
// an own commit read back by the shared reader (its place in the delivery
// order known). Each writer appends one event to its stream and waits
// until the Tail has read it, as a turn waits for its message; against
// the same writers not waiting (placed=false) it shows what the shared
// reader adds to a commit, and
// reads/s and events/read show whether the reader or the appends set the
// pace.
func BenchmarkPlacedInTheLog(b *testing.B) {
	for _, writers := range []int{16, 64, 256} {
		for _, wait := range []bool{true, false} {
			b.Run(fmt.Sprintf("writers=%d/placed=%t", writers, wait), func(b *testing.B) { benchmarkPlaced(b, writers, wait) })
		}
	}
}

func benchmarkPlaced(b *testing.B, writers int, wait bool) {
	s := benchStore(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reads, read atomic.Int64
	go func() {
		_ = eventstore.Follow(ctx, s, 0, eventstore.FollowOptions{Name: "bench"}, func(_ context.Context, evs []domain.Event) (int64, error) {
			reads.Add(1)
			read.Add(int64(len(evs)))
			return evs[len(evs)-1].Position, nil
		})
	}()
	for !s.Tail().Following() { // the reader starts once a follower reaches the end
		time.Sleep(time.Millisecond)
	}
	var next atomic.Int64
	var unplaced atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("turn-w%d", w)
			for v := int64(0); next.Add(1) <= int64(b.N); v++ {
				if _, err := s.Append(ctx, stream, eventstore.Exact(v), benchEvents(1)...); err != nil {
					b.Error(err)
					return
				}
				if ch := s.Tail().ReadOf(stream); ch != nil && wait {
					select {
					case <-ch:
					case <-time.After(5 * time.Second):
						unplaced.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	b.StopTimer()
	reportRate(b, int64(b.N), start)
	b.ReportMetric(float64(reads.Load())/elapsed, "reads/s")
	if n := reads.Load(); n > 0 {
		b.ReportMetric(float64(read.Load())/float64(n), "events/read")
	}
	if n := unplaced.Load(); n > 0 {
		b.Errorf("%d commits were not read back within 5 s", n)
	}
}
