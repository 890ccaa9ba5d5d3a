package eventstore

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/omega-gateway/omega/domain"
)

// A full window drops its oldest event for each new one. That must not
// copy the window: the Tail adds every event of the log, so a copy per
// read cost a fifth of a busy process's CPU.
func TestTailWindowSlidesWithoutCopying(t *testing.T) {
	tail := NewTail(func(context.Context, int64, int) ([]domain.Event, error) { return nil, nil },
		func(context.Context) <-chan struct{} { return nil })
	tail.offer(0)
	pos := int64(0)
	next := func() []domain.Event {
		pos++
		return []domain.Event{{Position: pos, StreamID: "s", Data: []byte(`{}`)}}
	}
	for range tailEvents + 10 {
		tail.add(next())
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const adds = 1000
	for range adds {
		tail.add(next())
	}
	runtime.ReadMemStats(&after)
	// Amortized, an add allocates its own event and a share of the
	// window's occasional regrowth; a copy of the window would allocate
	// tailEvents events on every add.
	perAdd := float64(after.TotalAlloc-before.TotalAlloc) / adds
	if limit := float64(64 * unsafe.Sizeof(domain.Event{})); perAdd > limit {
		t.Fatalf("adding one event to a full window allocates %.0f bytes (limit %.0f): the window is copied", perAdd, limit)
	}
	if len(tail.buf) != tailEvents {
		t.Fatalf("window holds %d events, want %d", len(tail.buf), tailEvents)
	}
	evs, ok := tail.take(pos-2, 10)
	if !ok || len(evs) != 2 || evs[0].Position != pos-1 || evs[1].Position != pos {
		t.Fatalf("take after %d: %v %v", pos-2, ok, evs)
	}
}

// Scan walks the window after a position without copying it and says
// when the position is not in it.
func TestTailScan(t *testing.T) {
	tail := NewTail(func(context.Context, int64, int) ([]domain.Event, error) { return nil, nil },
		func(context.Context) <-chan struct{} { return nil })
	if tail.Scan(0, func(domain.Event) bool { return true }) {
		t.Fatal("a Tail that has not started scanned")
	}
	tail.offer(10)
	tail.add([]domain.Event{{Position: 11}, {Position: 12}, {Position: 13}})
	positions := func(after int64, stopAt int64) ([]int64, bool) {
		var got []int64
		ok := tail.Scan(after, func(e domain.Event) bool {
			got = append(got, e.Position)
			return e.Position != stopAt
		})
		return got, ok
	}
	tests := []struct {
		after, stopAt int64
		want          []int64
		ok            bool
	}{
		{11, 0, []int64{12, 13}, true},
		{11, 12, []int64{12}, true},
		{13, 0, nil, true},  // at the end
		{10, 0, nil, false}, // the start is not an event of the window
		{7, 0, nil, false},
	}
	for _, tc := range tests {
		got, ok := positions(tc.after, tc.stopAt)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("scan after %d (stop at %d): %v %v, want %v %v", tc.after, tc.stopAt, got, ok, tc.want, tc.ok)
		}
	}
}
