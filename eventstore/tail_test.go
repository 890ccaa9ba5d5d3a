package eventstore

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/omega-gateway/omega/domain"
)

// growingTail is a started Tail and a function that adds the log's next
// event to it, returning its position.
func growingTail() (*Tail, func() int64) {
	tail := NewTail(func(context.Context, int64, int) ([]domain.Event, error) { return nil, nil },
		func(context.Context) <-chan struct{} { return nil })
	tail.offer(0)
	pos := int64(0)
	return tail, func() int64 {
		pos++
		tail.add(pos-1, []domain.Event{{Position: pos, StreamID: "s", Data: []byte(`{}`)}})
		return pos
	}
}

// A full window drops its oldest event for each new one. That must not
// copy the window: the Tail adds every event of the log, so a copy per
// read cost a fifth of a busy process's CPU.
func TestTailWindowSlidesWithoutCopying(t *testing.T) {
	tail, add := growingTail()
	for range tailEvents + 10 {
		add()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const adds = 1000
	var pos int64
	for range adds {
		pos = add()
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

// Followers are served slices of the window, not copies: a take
// allocates nothing, a batch taken keeps its events however the window
// slides and compacts afterwards, and a follower appending to its batch
// gets a copy the Tail's adds do not write over.
func TestTailTakeSharesTheWindow(t *testing.T) {
	tail, add := growingTail()
	for range 100 {
		add()
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = tail.take(50, 20) }); allocs != 0 {
		t.Fatalf("a take allocates %.0f times", allocs)
	}
	batch, ok := tail.take(50, 20)
	if !ok || len(batch) != 20 {
		t.Fatalf("take: %v, %d events", ok, len(batch))
	}
	mine := append(batch, domain.Event{Position: -1})
	for range 3 * tailEvents { // slides the window past the batch, compacting it
		add()
	}
	for i, e := range batch {
		if e.Position != int64(51+i) || e.StreamID != "s" {
			t.Fatalf("taken event %d became %+v", i, e)
		}
	}
	if mine[20].Position != -1 {
		t.Fatalf("the Tail wrote over a follower's append: %+v", mine[20])
	}
	if tail.dead > tailEvents/2 {
		t.Fatalf("%d dropped events still referenced by the window (at most %d)", tail.dead, tailEvents/2)
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
	tail.add(10, []domain.Event{{Position: 11}, {Position: 12}, {Position: 13}})
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

// Events handed over by the appender join the window only where it ends,
// and a read that was in flight meanwhile does not add them twice.
func TestTailDelivered(t *testing.T) {
	tail := NewTail(func(context.Context, int64, int) ([]domain.Event, error) { return nil, nil },
		func(context.Context) <-chan struct{} { return nil })
	evs := func(positions ...int64) []domain.Event {
		out := make([]domain.Event, len(positions))
		for i, p := range positions {
			out[i] = domain.Event{Position: p}
		}
		return out
	}
	window := func() []int64 {
		var got []int64
		for _, e := range tail.buf {
			got = append(got, e.Position)
		}
		return got
	}
	if tail.Delivered(0, evs(1)) {
		t.Fatal("a Tail that has not started took events")
	}
	tail.offer(10)
	steps := []struct {
		name      string
		do        func() bool
		want      []int64
		delivered bool
	}{
		{"at the end", func() bool { return tail.Delivered(10, evs(11, 12)) }, []int64{11, 12}, true},
		{"not at the end", func() bool { return tail.Delivered(11, evs(13)) }, []int64{11, 12}, false},
		{"a read from before, cut short", func() bool { tail.add(10, evs(11)); return false }, []int64{11, 12}, false},
		{"a read from before, going on", func() bool { tail.add(10, evs(11, 12, 13)); return false }, []int64{11, 12, 13}, false},
		{"after the read", func() bool { return tail.Delivered(13, evs(14)) }, []int64{11, 12, 13, 14}, true},
	}
	for _, st := range steps {
		if got := st.do(); got != st.delivered {
			t.Fatalf("%s: delivered = %v, want %v", st.name, got, st.delivered)
		}
		if got := window(); !slices.Equal(got, st.want) {
			t.Fatalf("%s: window %v, want %v", st.name, got, st.want)
		}
	}
	if !tail.Holds(14) || !tail.Holds(11) || tail.Holds(15) {
		t.Fatal("Holds disagrees with the window")
	}
}

// countingTail is a Tail over a log that has one more event at every read,
// signalled through signal.
func countingTail() (tail *Tail, reads *atomic.Int64, signal func()) {
	reads = &atomic.Int64{}
	ch := make(chan struct{}, 1)
	tail = NewTail(func(_ context.Context, after int64, _ int) ([]domain.Event, error) {
		reads.Add(1)
		return []domain.Event{{Position: after + 1}}, nil
	}, func(context.Context) <-chan struct{} { return ch })
	return tail, reads, func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// readsWhileSignalled runs tail while another process signals a change
// every millisecond for d, and returns how often it read the log.
func readsWhileSignalled(t *testing.T, tail *Tail, reads *atomic.Int64, signal func(), d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	tail.offer(0)
	go func() { defer close(done); tail.Run(ctx) }()
	for end := time.Now().Add(d); time.Now().Before(end); {
		signal()
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	return reads.Load()
}

// A process whose followers need no other process's events at once reads
// them at the lazy pace, however often other processes signal; one whose
// followers do reads after every signal.
func TestTailPacesOtherProcessesChanges(t *testing.T) {
	const d = 400 * time.Millisecond
	lazyTail, lazyReads, lazySignal := countingTail()
	lazyTail.SetUrgent(func() bool { return false })
	lazy := readsWhileSignalled(t, lazyTail, lazyReads, lazySignal, d)
	if limit := int64(d/TailLazy) + 3; lazy > limit {
		t.Fatalf("read %d times in %s while not urgent, want at most %d", lazy, d, limit)
	}
	urgentTail, urgentReads, urgentSignal := countingTail()
	urgentTail.SetUrgent(func() bool { return true })
	urgent := readsWhileSignalled(t, urgentTail, urgentReads, urgentSignal, d)
	if urgent < 2*lazy {
		t.Fatalf("read %d times while urgent, %d while not: signals are not followed", urgent, lazy)
	}
}

// What this process committed is read at once even when no follower needs
// other processes' events at once.
func TestTailPromptForItsOwnCommits(t *testing.T) {
	tail, _, _ := countingTail()
	tail.SetUrgent(func() bool { return false })
	tail.offer(0)
	if tail.prompt() {
		t.Fatal("prompt with nothing of its own awaited")
	}
	tail.Committed([]domain.Event{{Position: 5}})
	if !tail.prompt() {
		t.Fatal("not prompt while its own commit is unread")
	}
	tail.add(0, []domain.Event{{Position: 5}})
	if tail.prompt() {
		t.Fatal("still prompt once its own commit was read")
	}
}

// Only the own commits a follower waits for make the Tail prompt.
func TestTailAwaitsWhatFollowersWaitFor(t *testing.T) {
	tail, _, _ := countingTail()
	tail.SetUrgent(func() bool { return false })
	tail.SetAwaited(func(e domain.Event) bool { return e.Type == "Wanted" })
	tail.offer(0)
	tail.Committed([]domain.Event{{Position: 5, Type: "Other"}})
	if tail.prompt() {
		t.Fatal("prompt for a commit no follower waits for")
	}
	tail.Committed([]domain.Event{{Position: 6, Type: "Wanted"}})
	if !tail.prompt() {
		t.Fatal("not prompt while a commit a follower waits for is unread")
	}
	tail.add(0, []domain.Event{{Position: 5}, {Position: 6}})
	if tail.prompt() {
		t.Fatal("still prompt once the awaited commit was read")
	}
}

// While it awaits an own commit, the Tail reads through the backend's
// awaiting read, for the latest awaited position; otherwise plainly.
func TestTailAwaitingRead(t *testing.T) {
	log := []domain.Event{{Position: 1}, {Position: 2}, {Position: 3}}
	after := func(pos int64) []domain.Event {
		for i, e := range log {
			if e.Position > pos {
				return slices.Clone(log[i:])
			}
		}
		return nil
	}
	var plain atomic.Int64
	awaitedReads := make(chan int64, 10)
	changes := make(chan struct{}, 1)
	tail := NewTail(func(_ context.Context, pos int64, _ int) ([]domain.Event, error) {
		plain.Add(1)
		return nil, nil // the own commits are not readable without waiting
	}, func(context.Context) <-chan struct{} { return changes })
	tail.SetAwaitingRead(func(_ context.Context, pos int64, _ int, awaited int64) ([]domain.Event, error) {
		awaitedReads <- awaited
		return after(pos), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tail.offer(0)
	go tail.Run(ctx)

	tail.Committed([]domain.Event{{Position: 3}, {Position: 2}})
	changes <- struct{}{}
	select {
	case got := <-awaitedReads:
		if got != 3 {
			t.Fatalf("awaiting read for %d, want the latest awaited commit, 3", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Tail never read awaiting its commits")
	}
	for deadline := time.Now().Add(10 * time.Second); !tail.Holds(3); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the awaited commits never joined the window")
		}
	}
	before := plain.Load()
	changes <- struct{}{}
	for deadline := time.Now().Add(10 * time.Second); plain.Load() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("with nothing awaited, a change signal brought no plain read")
		}
	}
	select {
	case got := <-awaitedReads:
		t.Fatalf("an awaiting read for %d with nothing awaited", got)
	default:
	}
}

// A follower that begins to need other processes' events at once makes a
// Tail that is waiting out its lazy pace, or its poll, read at once.
func TestTailHurries(t *testing.T) {
	tail, reads, signal := countingTail()
	tail.SetUrgent(func() bool { return false })
	tail.poll, tail.lazy = time.Hour, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tail.offer(0)
	go tail.Run(ctx)
	readsReach := func(n int64, what string) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); reads.Load() < n; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: %d reads, want %d", what, reads.Load(), n)
			}
		}
	}
	readsReach(1, "the first read")
	signal() // another process's change: read at the lazy pace, an hour away
	time.Sleep(20 * time.Millisecond)
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads before any hurry, want 1", n)
	}
	tail.Hurry()
	readsReach(2, "hurried while pacing a change")
	tail.Hurry()
	readsReach(3, "hurried while waiting for a change")
}

// ReadOf's channel closes exactly when the Tail stops awaiting the own
// commit on its stream: read, given up, or the window dropped; a stream
// with no awaited commit has none.
func TestTailReadOf(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	for _, tc := range []struct {
		name string
		end  func(*Tail)
	}{
		{"read", func(tail *Tail) {
			tail.add(0, []domain.Event{{Position: 5, StreamID: "turn-b"}, {Position: 6, StreamID: "turn-a"}})
		}},
		{"given up", func(tail *Tail) {
			tail.mu.Lock()
			c := tail.awaited[6]
			c.at = c.at.Add(-tailAwaitFor - time.Second)
			tail.awaited[6] = c
			tail.mu.Unlock()
			tail.missing()
		}},
		{"window dropped", func(tail *Tail) { tail.reset() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tail, _, _ := countingTail()
			tail.SetAwaited(func(e domain.Event) bool { return e.Type == "Wanted" })
			tail.offer(0)
			tail.Committed([]domain.Event{{Position: 5, StreamID: "turn-b", Type: "Other"}, {Position: 6, StreamID: "turn-a", Type: "Wanted"}})
			if ch := tail.ReadOf("turn-b"); ch != nil {
				t.Fatal("a channel for a stream with no awaited commit")
			}
			ch := tail.ReadOf("turn-a")
			if ch == nil || closed(ch) {
				t.Fatal("no open channel for the awaited commit")
			}
			if again := tail.ReadOf("turn-a"); again != ch {
				t.Fatal("a second channel for the same commit")
			}
			tc.end(tail)
			if !closed(ch) {
				t.Fatal("the channel is still open once the commit is no longer awaited")
			}
			if tail.ReadOf("turn-a") != nil {
				t.Fatal("a channel for a commit no longer awaited")
			}
		})
	}
}
