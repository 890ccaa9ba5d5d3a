// Package streamcache keeps recently loaded streams in memory so that loading a
// stream this process already knows costs no round trip to the database.
// A turn folds its own stream, its sender's profile and learning, the
// identity links, the project and skill catalogues and the pairing state:
// eight reads of the log per turn that almost never find anything new.
//
// A cached stream is exactly what a Load would return as of the log this
// process has seen: every event the shared Tail reads and every append this
// process commits extends (or drops) the cached copy before anyone is told
// of it. So a process always reads its own writes; another process's
// append is seen as soon as the Tail has read it (on the same change signal
// that wakes the read models), which is the freshness every read model of
// the process already has. A decision taken on a copy that another process
// has moved meanwhile fails its append with a version conflict, which drops
// the copy, so the retry reads the database. A decision with an effect
// before its append (a model call) cannot wait for that refusal: a process
// taking over such work from another reads with eventstore.FreshReads.
//
// Entries are trusted only while the Tail is following the log: before it
// starts and after it stops (a failed read) nothing is cached, because an
// event the Tail skipped could never invalidate a copy.
package streamcache

import (
	"container/list"
	"sync"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// Cache is the streams this process read or wrote lately, bounded in bytes.
type Cache struct {
	mu      sync.Mutex
	live    bool
	gen     uint64 // bumped whenever every entry is dropped
	seq     uint64 // bumped by every change to any stream
	ring    [changeRing]change
	entries map[string]*list.Element // stream -> *cachedStream in lru or finished
	lru     list.List                // front: most recently used
	// finished holds completed turns' streams, oldest completion at the
	// front: the first to go when room is needed (see place).
	finished list.List
	bytes    int
	maxBytes int
	// watchers are told of each change to their stream (see Watch).
	watchers map[string]map[chan struct{}]struct{}
}

// cachedStream is one stream as of version. full: events holds all of it
// (versions 1..version); otherwise only its version is known.
type cachedStream struct {
	stream  string
	version int64
	full    bool
	events  []domain.Event
	bytes   int
	done    bool // a turn's stream that ends with its completion
}

// change is one stream changed at seq (see Token).
type change struct {
	seq    uint64
	stream string
}

// Bounds of a Cache.
const (
	// DefaultBytes bounds the event data a cache holds.
	DefaultBytes = 8 << 20
	// maxCachedStream is the largest stream kept whole: longer ones (a
	// profile with years of facts) are read from the database.
	maxCachedStream = 256 << 10
	// changeRing is how many recent changes a load can be checked
	// against; a load overtaken by more is simply not cached.
	changeRing = 1024
	// eventOverhead approximates an event's envelope in memory.
	eventOverhead = 160
)

// New returns an empty cache holding up to maxBytes of events
// (DefaultBytes when maxBytes <= 0). It caches nothing until
// SetLive(true).
func New(maxBytes int) *Cache {
	if maxBytes <= 0 {
		maxBytes = DefaultBytes
	}
	return &Cache{entries: map[string]*list.Element{}, maxBytes: maxBytes}
}

// Token is taken before a database read and handed back with its
// result, so that a read overtaken by a change is not cached.
type Token struct {
	gen, seq uint64
	live     bool
}

// SetLive tells the cache whether the Tail is following the log. Either
// way every entry is dropped: a Tail that starts did not see what came
// before, one that stops will not see what comes next.
func (c *Cache) SetLive(live bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.dropAll()
}

func (c *Cache) dropAll() {
	c.gen++
	c.entries = map[string]*list.Element{}
	c.lru.Init()
	c.finished.Init()
	c.bytes = 0
}

// Token starts a database read whose result may be cached.
func (c *Cache) Token() Token {
	if c == nil {
		return Token{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Token{gen: c.gen, seq: c.seq, live: c.live}
}

// Load returns the stream's events with version >= from, if the whole
// stream is cached.
func (c *Cache) Load(stream string, from int64) ([]domain.Event, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := c.get(stream)
	if cs == nil || !cs.full {
		return nil, false
	}
	from = max(from, 1)
	if from > cs.version {
		return nil, true
	}
	// The cached events are only ever appended to, so the caller may
	// share them; capped, so that its appends copy them.
	return cs.events[from-1 : len(cs.events) : len(cs.events)], true
}

// Version returns the stream's version if the cache knows it.
func (c *Cache) Version(stream string) (int64, bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs := c.get(stream); cs != nil {
		return cs.version, true
	}
	return 0, false
}

// Loaded offers the result of Load(stream, from) read from the database
// after tok was taken. Only whole streams are kept.
func (c *Cache) Loaded(tok Token, stream string, from int64, evs []domain.Event) {
	if c == nil || from > 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.usable(tok, stream) {
		return
	}
	var version int64
	if n := len(evs); n > 0 {
		version = evs[n-1].Version
		if evs[0].Version != 1 || version != int64(n) {
			return // not the whole stream: never guess
		}
	}
	c.put(&cachedStream{stream: stream, version: version, full: true, events: append([]domain.Event(nil), evs...)})
}

// VersionRead offers the result of StreamVersion(stream) read from the
// database after tok was taken.
func (c *Cache) VersionRead(tok Token, stream string, version int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.usable(tok, stream) || c.get(stream) != nil {
		return
	}
	c.put(&cachedStream{stream: stream, version: version, full: version == 0})
}

// Appended records events this process committed to one stream (in
// version order, with their positions and recording times).
func (c *Cache) Appended(stream string, evs []domain.Event) {
	if c == nil || len(evs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apply(stream, evs, true)
}

// Observe records events read from the log, in delivery order, before
// their reader sees them: the Tail's reads at the end of the log, and any
// other reader's (a follower reading the log itself may be ahead of the
// Tail, or of the append that wrote them telling the cache, and what it
// then loads must include what it read). They extend the streams the
// cache holds; a stream it does not hold starts no copy. A reader may be
// far behind the end, and at the end this process's new streams start
// theirs when committed (Appended): another process's are that process's
// to fold, and a copy of each would cost every process a copy of every
// stream of the cluster, pushing out the streams its own turns fold.
func (c *Cache) Observe(evs []domain.Event) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].StreamID == evs[i].StreamID {
			j++
		}
		c.apply(evs[i].StreamID, evs[i:j], false)
		i = j
	}
}

// Drop forgets a stream, for instance after a version conflict showed
// that the database moved on.
func (c *Cache) Drop(stream string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.note(stream)
	if el, ok := c.entries[stream]; ok {
		c.remove(el)
	}
}

// apply extends a cached stream with its next events, ignores events it
// already holds, and drops it when events are missing in between. With
// atEnd, events of a stream it does not hold start a copy when they begin
// the stream.
func (c *Cache) apply(stream string, evs []domain.Event, atEnd bool) {
	c.note(stream)
	if !c.live {
		return
	}
	el, ok := c.entries[stream]
	if !ok {
		if atEnd && evs[0].Version == 1 { // a new stream: known whole from here
			c.put(&cachedStream{stream: stream, full: true, version: 0})
			el = c.entries[stream]
		}
		if el == nil {
			return
		}
	}
	cs := el.Value.(*cachedStream)
	for _, e := range evs {
		switch {
		case e.Version <= cs.version:
			continue
		case e.Version == cs.version+1:
			cs.version = e.Version
			if cs.full {
				cs.events = append(cs.events, e)
				cs.bytes += eventSize(e)
				c.bytes += eventSize(e)
			}
		default:
			c.remove(el)
			return
		}
	}
	if cs.bytes > maxCachedStream {
		c.remove(el)
		return
	}
	c.place(el, evs[len(evs)-1].Type == (turn.TurnCompleted{}).EventType())
	c.evict()
}

// place puts a stream that changed where it belongs. A completed turn's
// stream is read once more at most (by whoever awaits its reply, once its
// completion is readable): completed turns go first when room is needed,
// oldest completion first, so that the streams turns keep folding
// (senders' profiles, catalogues) stay while a thousand turns pass
// through, and the turn that completed last is still there for its
// reader.
func (c *Cache) place(el *list.Element, done bool) {
	cs := el.Value.(*cachedStream)
	switch {
	case done && cs.done:
		c.finished.MoveToBack(el)
	case !done && !cs.done:
		c.lru.MoveToFront(el)
	default:
		c.unlink(el)
		cs.done = done
		c.entries[cs.stream] = c.link(cs)
	}
}

// link adds cs to its list: a completed turn as the latest completion,
// any other stream as the most recently used.
func (c *Cache) link(cs *cachedStream) *list.Element {
	if cs.done {
		return c.finished.PushBack(cs)
	}
	return c.lru.PushFront(cs)
}

// unlink takes el out of its list.
func (c *Cache) unlink(el *list.Element) {
	if el.Value.(*cachedStream).done {
		c.finished.Remove(el)
		return
	}
	c.lru.Remove(el)
}

// note records that stream changed, for loads in flight and watchers.
func (c *Cache) note(stream string) {
	c.seq++
	c.ring[c.seq%changeRing] = change{seq: c.seq, stream: stream}
	for ch := range c.watchers[stream] {
		select {
		case ch <- struct{}{}:
		default: // one signal pending is enough
		}
	}
}

// Watch returns a channel that is signalled after each change to stream
// the cache learns of (an append of this process, an event the Tail read,
// a drop), and a function that stops the watch. A waiter for one stream
// wakes only for that stream, where a subscriber to the store's changes
// wakes for every append: a thousand replies awaited at once would
// otherwise each look at their turn after every append of any of them.
// The signal may come before the change is applied; a Load taken after
// it sees the change.
func (c *Cache) Watch(stream string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if c == nil {
		return ch, func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchers == nil {
		c.watchers = map[string]map[chan struct{}]struct{}{}
	}
	ws := c.watchers[stream]
	if ws == nil {
		ws = map[chan struct{}]struct{}{}
		c.watchers[stream] = ws
	}
	ws[ch] = struct{}{}
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(ws, ch)
		if len(c.watchers[stream]) == 0 {
			delete(c.watchers, stream)
		}
	}
}

// usable reports whether a read begun at tok may be cached for stream: the
// cache was live throughout and nothing changed the stream meanwhile.
func (c *Cache) usable(tok Token, stream string) bool {
	if !c.live || !tok.live || tok.gen != c.gen || c.seq-tok.seq >= changeRing {
		return false
	}
	for s := tok.seq + 1; s <= c.seq; s++ {
		if c.ring[s%changeRing].stream == stream {
			return false
		}
	}
	return true
}

func (c *Cache) get(stream string) *cachedStream {
	if !c.live {
		return nil
	}
	el, ok := c.entries[stream]
	if !ok {
		return nil
	}
	cs := el.Value.(*cachedStream)
	if !cs.done {
		c.lru.MoveToFront(el)
	}
	return cs
}

func (c *Cache) put(cs *cachedStream) {
	for _, e := range cs.events {
		cs.bytes += eventSize(e)
	}
	if cs.bytes > maxCachedStream {
		return
	}
	if el, ok := c.entries[cs.stream]; ok {
		c.remove(el)
	}
	if n := len(cs.events); n > 0 {
		cs.done = cs.events[n-1].Type == (turn.TurnCompleted{}).EventType()
	}
	c.entries[cs.stream] = c.link(cs)
	c.bytes += cs.bytes
	c.evict()
}

// evict removes streams until the cache is within its bound: completed
// turns first, oldest completion first, then the least recently used; the
// last stream stays.
func (c *Cache) evict() {
	for c.bytes > c.maxBytes && c.lru.Len()+c.finished.Len() > 1 {
		if c.finished.Len() > 0 {
			c.remove(c.finished.Front())
			continue
		}
		c.remove(c.lru.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	cs := el.Value.(*cachedStream)
	c.unlink(el)
	delete(c.entries, cs.stream)
	c.bytes -= cs.bytes
}

func eventSize(e domain.Event) int {
	return len(e.Data) + len(e.StreamID) + len(e.Type) + eventOverhead
}

// Committed records an append this process committed, as Recorded
// returned it (nil: the stream is dropped).
func (c *Cache) Committed(stream string, evs []domain.Event) {
	if c == nil {
		return
	}
	if evs != nil {
		c.Appended(stream, evs)
		return
	}
	c.Drop(stream)
}
