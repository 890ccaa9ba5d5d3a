package eventstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore/streamcache"
)

// Tail is one shared reader of the end of the log for every follower of a
// process: the projection engine, the HTTP reply watcher, the task
// follower and the command bus each used to read the log after every
// append; through a Tail the log is read once per change and the events
// are handed to each follower from memory.
//
// A follower whose position is in the Tail's window (the last events it
// read) or at its end is served from memory; any other follower (catching
// up from an old checkpoint, or lagging more than the window) reads the
// log itself, as Follow does, until it reaches the window. The Tail starts
// reading at the first position a follower found nothing after (the
// visible end of the log then), so it never reads what nobody follows.
//
// Delivery order and cursors are the store's: the window is a contiguous
// run of that order, so a follower served from it sees exactly what
// ReadAll would have returned. Followers are handed the window's events
// themselves, as every store's reads may be shared: they never change
// them.
type Tail struct {
	read    func(ctx context.Context, after int64, limit int) ([]domain.Event, error)
	changes func(ctx context.Context) <-chan struct{}
	poll    time.Duration
	lazy    time.Duration // the pace of reads no follower needs at once (TailLazy)

	mu      sync.Mutex
	started bool
	head    int64           // position of the last event read (or the start)
	buf     []domain.Event  // the window, delivery order, ending at head
	index   map[int64]int64 // position -> sequence number of buffered events
	first   int64           // sequence number of buf[0]
	bytes   int
	// dead and deadBytes count the events dropped from the front of buf's
	// backing array, still referenced there (see addLocked).
	dead, deadBytes int
	start           chan struct{} // signalled when started becomes true
	hurry           chan struct{} // signalled when a follower needs a read now (Hurry)
	grown           Broadcaster   // signalled when the window grows or resets
	// awaited are own commits not read yet (with when they were
	// committed): while any is missing the Tail keeps reading soon, as
	// the transaction holding the horizon back may end without a signal.
	awaited    map[int64]awaitedCommit
	awaits     func(domain.Event) bool // which own commits are awaited (SetAwaited)
	gotAwaited uint64                  // awaited positions read so far
	// awaitedOn and readers serve ReadOf: the awaited commit of each
	// stream, and the channels closed when one is no longer awaited.
	awaitedOn map[string]int64
	readers   map[int64]chan struct{}
	// cache, when set, sees every event read before any follower does,
	// and is live exactly while the Tail follows the log.
	cache *streamcache.Cache
	// urgent, when set, tells whether a follower of this process needs
	// other processes' events as soon as they commit (see SetUrgent).
	urgent func() bool
	// readAwaiting, when set, reads once an awaited own commit is
	// readable (see SetAwaitingRead).
	readAwaiting AwaitingRead
}

// AwaitingRead is a backend's read of the log after position after that
// first waits, a bounded time, until the own commit at position awaited
// can be read (no older transaction is still running). It returns what
// is readable then, whether or not the wait succeeded.
type AwaitingRead func(ctx context.Context, after int64, limit int, awaited int64) ([]domain.Event, error)

// SetAwaitingRead gives the Tail a read that waits for an awaited own
// commit in the backend: a process that must see its own commit's place
// in the log (another process's older transaction still running) then
// reads once, instead of reading again at every change signal and retry
// until it can. Call it before Run.
func (t *Tail) SetAwaitingRead(read AwaitingRead) { t.readAwaiting = read }

// Bounds of a Tail's window and of one read.
const (
	tailEvents = 2048
	tailBytes  = 8 << 20
	tailBatch  = 500
	// TailPoll is how often a Tail reads without a change signal: a lost
	// signal, or a transaction that held the PostgreSQL visibility
	// horizon back and then rolled back without one. Signals (in-process
	// and LISTEN/NOTIFY) wake it otherwise.
	TailPoll = time.Second
	// tailAwaitFor bounds how long a committed position is awaited (one
	// the Tail cannot see, from before its start, is given up).
	tailAwaitFor = 2 * time.Second
	// TailLazy spaces the reads of other processes' events while no
	// follower needs them at once (SetUrgent).
	TailLazy = 100 * time.Millisecond
)

// NewTail returns a Tail over a store's read (which need not check its
// cursor: the Tail only passes positions it read) and change signals.
// Run must be running for it to serve followers from memory.
func NewTail(read func(ctx context.Context, after int64, limit int) ([]domain.Event, error), changes func(ctx context.Context) <-chan struct{}) *Tail {
	return &Tail{read: read, changes: changes, poll: TailPoll, lazy: TailLazy, index: map[int64]int64{}, start: make(chan struct{}, 1),
		hurry: make(chan struct{}, 1), awaited: map[int64]awaitedCommit{}, awaitedOn: map[string]int64{}, readers: map[int64]chan struct{}{}}
}

// SetCache makes c see every event the Tail reads; call it before Run.
func (t *Tail) SetCache(c *streamcache.Cache) { t.cache = c }

// Grown returns a channel signalled when the Tail has read more of the
// log (or dropped its window), until ctx ends.
func (t *Tail) Grown(ctx context.Context) <-chan struct{} { return t.grown.Subscribe(ctx) }

// Committed tells the Tail that this process committed evs, before
// signalling the change: it reads promptly until it has seen those a
// follower waits for (SetAwaited), and the others at its pace.
func (t *Tail) Committed(evs []domain.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return
	}
	now := time.Now()
	for _, e := range evs {
		if t.awaits != nil && e.Type != "" && !t.awaits(e) {
			continue
		}
		if _, read := t.index[e.Position]; !read { // a read may have been quicker
			t.awaited[e.Position] = awaitedCommit{at: now, stream: e.StreamID}
			t.awaitedOn[e.StreamID] = e.Position
		}
	}
}

// Run reads the end of the log until ctx ends, once a follower has
// reached it.
func (t *Tail) Run(ctx context.Context) {
	changes := t.changes(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.start:
		}
		t.follow(ctx, changes)
	}
}

// follow reads after head until ctx ends or a read fails (then the window
// is dropped and followers read the log themselves until one offers a
// new start).
func (t *Tail) follow(ctx context.Context, changes <-chan struct{}) {
	b := horizonWait{retry: tailRetryMin, signalled: time.Now()}
	for {
		t.mu.Lock()
		after, got := t.head, t.gotAwaited
		t.mu.Unlock()
		began := time.Now()
		evs, err := t.readNext(ctx, after)
		if err != nil {
			t.reset()
			return
		}
		if len(evs) > 0 {
			t.add(after, evs)
			if len(evs) == tailBatch {
				continue
			}
		}
		wait := t.nextWait(&b, len(evs) == 0, got)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			t.reset()
			return
		case <-changes:
			timer.Stop()
			b.signalled = time.Now()
			if !t.pace(ctx, changes, began) {
				t.reset()
				return
			}
		case <-t.hurry:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// readNext reads what follows position after: once the latest awaited own
// commit is readable, when the backend can wait for it.
func (t *Tail) readNext(ctx context.Context, after int64) ([]domain.Event, error) {
	if t.readAwaiting != nil {
		if awaited := t.latestAwaited(); awaited > 0 {
			return t.readAwaiting(ctx, after, tailBatch, awaited)
		}
	}
	return t.read(ctx, after, tailBatch)
}

// add appends what a read after position after returned. Events handed
// over by Delivered while the read was in flight begin its result: those
// are skipped (and anything a read returns that does not go on from the
// window's end is dropped; the next read starts from there).
func (t *Tail) add(after int64, evs []domain.Event) {
	t.mu.Lock()
	if t.head != after {
		evs = following(evs, t.head)
	}
	t.addLocked(evs)
	t.mu.Unlock()
	t.grown.Notify()
}

// following returns the events of evs after the one at position pos; none
// if pos is not among them.
func following(evs []domain.Event, pos int64) []domain.Event {
	for i, e := range evs {
		if e.Position == pos {
			return evs[i+1:]
		}
	}
	return nil
}

// Delivered hands the Tail events this process has just committed whose
// place in the delivery order the backend knows: they come right after
// the event at position prev, and nothing can ever be delivered between
// (no older transaction was still running). If the window ends at prev,
// they join it at once and the followers are served without waiting for a
// read of the log, and true is returned: the change needs no signal to
// the Tail. Otherwise the Tail must be signalled to read them as any other
// change.
func (t *Tail) Delivered(prev int64, evs []domain.Event) bool {
	if len(evs) == 0 {
		return false
	}
	t.mu.Lock()
	if !t.started || t.head != prev {
		t.mu.Unlock()
		return false
	}
	t.addLocked(evs)
	t.mu.Unlock()
	t.grown.Notify()
	return true
}

// Following reports whether the Tail reads the log, so that its window
// holds the latest events: a position it does not hold is then behind it.
func (t *Tail) Following() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.started
}

// Holds reports whether the event at position pos is in the Tail's window
// or is where it started.
func (t *Tail) Holds(pos int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return false
	}
	_, ok := t.index[pos]
	return ok || pos == t.head
}

// addLocked appends evs to the window and slides it; the caller holds mu
// and signals grown after unlocking.
func (t *Tail) addLocked(evs []domain.Event) {
	if len(evs) == 0 {
		return
	}
	if len(evs) > cap(t.buf)-len(t.buf) { // the appends copy the window to a new array
		t.dead, t.deadBytes = 0, 0
	}
	for _, e := range evs {
		t.index[e.Position] = t.first + int64(len(t.buf))
		t.buf = append(t.buf, e)
		t.bytes += len(e.Data)
		if _, ok := t.awaited[e.Position]; ok {
			t.settleLocked(e.Position)
			t.gotAwaited++
		}
	}
	t.cache.Observe(evs)
	t.head = evs[len(evs)-1].Position
	drop, droppedBytes := 0, 0
	for len(t.buf)-drop > tailEvents || (t.bytes > tailBytes && len(t.buf)-drop > 1) {
		delete(t.index, t.buf[drop].Position)
		t.bytes -= len(t.buf[drop].Data)
		droppedBytes += len(t.buf[drop].Data)
		drop++
	}
	if drop == 0 {
		return
	}
	// Followers are handed slices of the window (take), never copies, so
	// the slots of dropped events are not cleared: a follower may still
	// read them. Reslicing keeps an add O(events added); the backing array
	// is copied when appends fill it or, so that dropped payloads are not
	// kept alive for long, once the dropped events outnumber or outweigh
	// half a window.
	t.buf = t.buf[drop:]
	t.first += int64(drop)
	t.dead += drop
	t.deadBytes += droppedBytes
	if t.dead > tailEvents/2 || t.deadBytes > tailBytes/2 {
		t.buf = append(make([]domain.Event, 0, len(t.buf)+tailEvents/2+tailBatch), t.buf...)
		t.dead, t.deadBytes = 0, 0
	}
}

func (t *Tail) reset() {
	t.mu.Lock()
	t.started, t.buf, t.index, t.bytes, t.first = false, nil, map[int64]int64{}, 0, 0
	t.dead, t.deadBytes = 0, 0
	for p := range t.awaited {
		t.settleLocked(p)
	}
	t.cache.SetLive(false)
	t.mu.Unlock()
	t.grown.Notify()
}

// offer starts the Tail at after, a position nothing was found after.
func (t *Tail) offer(after int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return
	}
	t.started, t.head = true, after
	t.cache.SetLive(true)
	select {
	case t.start <- struct{}{}:
	default:
	}
}

// take returns up to limit events after position after from the window;
// ok is false when after is neither in the window nor at its end.
func (t *Tail) take(after int64, limit int) (evs []domain.Event, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	from, ok := t.after(after)
	if !ok {
		return nil, false
	}
	to := min(from+limit, len(t.buf))
	// Capped, so that a follower appending to its batch copies it rather
	// than write into the window.
	return t.buf[from:to:to], true
}

// after returns the index in buf of the event that follows position pos
// (len(buf) at the end); false when pos is neither in the window nor at
// its end. The caller holds mu.
func (t *Tail) after(pos int64) (int, bool) {
	if !t.started {
		return 0, false
	}
	if pos == t.head {
		return len(t.buf), true
	}
	seq, found := t.index[pos]
	if !found {
		return 0, false
	}
	return int(seq-t.first) + 1, true
}

// Scan calls fn, from memory and without copying, with each event of the
// window that follows position after, until fn returns false; false when
// after is neither in the window nor at its end (the caller must then
// assume it knows nothing of what follows). fn runs under the Tail's
// lock: it must not call the Tail.
func (t *Tail) Scan(after int64, fn func(domain.Event) bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	from, ok := t.after(after)
	if !ok {
		return false
	}
	for _, e := range t.buf[from:] {
		if !fn(e) {
			break
		}
	}
	return true
}

// Follow is eventstore.Follow served by the Tail: fn sees the same
// batches' events in the same order, read once for every follower.
func (t *Tail) Follow(ctx context.Context, s Store, after int64, opts FollowOptions, fn func(context.Context, []domain.Event) (int64, error)) error {
	opts = opts.withDefaults()
	grown := t.grown.Subscribe(ctx)
	failures := readRetry{opts: opts}
	for {
		events, ok := t.take(after, opts.BatchSize)
		if !ok {
			var err error
			if events, err = s.ReadAll(ctx, after, opts.BatchSize); err != nil {
				if err := failures.failed(ctx, after, fmt.Errorf("follow after %d: %w", after, err)); err != nil {
					return err
				}
				continue
			}
			failures.succeeded(after)
			if len(events) == 0 {
				t.offer(after)
			}
		}
		if len(events) > 0 {
			next, err := fn(ctx, events)
			if err != nil {
				return err
			}
			after = next
			continue
		}
		// At the end: the Tail wakes us when it read more. The timer
		// only covers a follower that read the log itself and is not in
		// the window yet.
		timer := time.NewTimer(opts.PollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-grown:
			timer.Stop()
		case <-timer.C:
		}
	}
}
