package streamcache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

func cacheEvents(stream string, from, to int64) []domain.Event {
	var out []domain.Event
	for v := from; v <= to; v++ {
		out = append(out, domain.Event{Position: v * 10, StreamID: stream, Version: v, Type: "T", Data: []byte(fmt.Sprintf(`{"v":%d}`, v))})
	}
	return out
}

func liveCache() *Cache {
	c := New(0)
	c.SetLive(true)
	return c
}

// What a cache answers after a sequence of what it was told.
func TestStreamCacheDecisions(t *testing.T) {
	cases := []struct {
		name    string
		build   func(c *Cache)
		cached  bool  // Load("s", 1) is answered from memory
		version int64 // and ends at this version
	}{
		{"a loaded stream", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
		}, true, 3},
		{"extended by the next events read", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
			c.Observe(cacheEvents("s", 4, 5))
		}, true, 5},
		{"events already held are ignored", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
			c.Observe(cacheEvents("s", 2, 3))
		}, true, 3},
		{"a gap drops the stream", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
			c.Observe(cacheEvents("s", 5, 5))
		}, false, 0},
		{"a new stream written here is known whole", func(c *Cache) {
			c.Appended("s", cacheEvents("s", 1, 2))
		}, true, 2},
		{"a new stream read from the log is not kept", func(c *Cache) {
			c.Observe(cacheEvents("s", 1, 3))
		}, false, 0},
		{"an old stream written here is not", func(c *Cache) {
			c.Appended("s", cacheEvents("s", 4, 4))
		}, false, 0},
		{"a load overtaken by a change is not kept", func(c *Cache) {
			tok := c.Token()
			c.Observe(cacheEvents("s", 1, 4))
			c.Drop("s")
			c.Loaded(tok, "s", 1, cacheEvents("s", 1, 3))
		}, false, 0},
		{"a change to another stream does not matter", func(c *Cache) {
			tok := c.Token()
			c.Observe(cacheEvents("other", 2, 2))
			c.Loaded(tok, "s", 1, cacheEvents("s", 1, 3))
		}, true, 3},
		{"part of a stream is not kept", func(c *Cache) {
			c.Loaded(c.Token(), "s", 2, cacheEvents("s", 2, 3))
		}, false, 0},
		{"a conflict drops the stream", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
			c.Drop("s")
		}, false, 0},
		{"nothing is kept once the reader stops", func(c *Cache) {
			c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 3))
			c.SetLive(false)
		}, false, 0},
		{"a load begun before the reader restarted is not kept", func(c *Cache) {
			tok := c.Token()
			c.SetLive(false)
			c.SetLive(true)
			c.Loaded(tok, "s", 1, cacheEvents("s", 1, 3))
		}, false, 0},
		{"an empty stream is known whole", func(c *Cache) {
			c.VersionRead(c.Token(), "s", 0)
		}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := liveCache()
			tc.build(c)
			evs, ok := c.Load("s", 1)
			if ok != tc.cached {
				t.Fatalf("cached %v, want %v", ok, tc.cached)
			}
			if !ok {
				return
			}
			if int64(len(evs)) != tc.version {
				t.Fatalf("%d events, want %d", len(evs), tc.version)
			}
			for i, e := range evs {
				if e.Version != int64(i+1) {
					t.Fatalf("event %d has version %d", i, e.Version)
				}
			}
			if v, ok := c.Version("s"); !ok || v != tc.version {
				t.Fatalf("version %d (%v), want %d", v, ok, tc.version)
			}
		})
	}
}

func TestStreamCacheIsBounded(t *testing.T) {
	c := New(64 << 10)
	c.SetLive(true)
	big := strings.Repeat("x", 1000)
	for i := range 1000 {
		stream := fmt.Sprintf("s-%d", i)
		evs := cacheEvents(stream, 1, 1)
		evs[0].Data = []byte(`"` + big + `"`)
		c.Appended(stream, evs)
	}
	if c.bytes > 64<<10 {
		t.Fatalf("holds %d bytes, bound 65536", c.bytes)
	}
	if _, ok := c.Load("s-999", 1); !ok {
		t.Fatal("the most recent stream was evicted")
	}
	if _, ok := c.Load("s-0", 1); ok {
		t.Fatal("the oldest stream was kept past the bound")
	}
	// A stream past the per-stream bound is never kept whole.
	huge := cacheEvents("huge", 1, 1)
	huge[0].Data = make([]byte, maxCachedStream+1)
	c.Appended("huge", huge)
	if _, ok := c.Load("huge", 1); ok {
		t.Fatal("a stream larger than the per-stream bound is cached")
	}
}

// Loaded events are shared with the cache, read-only and capped: a
// caller that appends to them gets a copy, which the cache's own appends
// do not overwrite.
func TestStreamCacheSharesCappedEvents(t *testing.T) {
	c := liveCache()
	c.Loaded(c.Token(), "s", 1, cacheEvents("s", 1, 2))
	c.Appended("s", cacheEvents("s", 3, 3)) // the cache's slice now has room
	evs, _ := c.Load("s", 1)
	mine := append(evs, cacheEvents("s", 9, 9)...)
	c.Appended("s", cacheEvents("s", 4, 4))
	if mine[3].Version != 9 {
		t.Fatalf("the cache wrote over a caller's append: %+v", mine[3])
	}
	if again, _ := c.Load("s", 1); len(again) != 4 || again[3].Version != 4 {
		t.Fatalf("the cache holds %+v", again)
	}
}

// A watch wakes for its own stream's changes only, and not after it stops.
func TestStreamCacheWatch(t *testing.T) {
	c := liveCache()
	signalled := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	a, stopA := c.Watch("a")
	b, stopB := c.Watch("b")
	defer stopB()
	c.Appended("a", cacheEvents("a", 1, 1))
	if !signalled(a) || signalled(b) {
		t.Fatal("an append to a must signal a's watch only")
	}
	c.Observe(cacheEvents("b", 1, 2))
	c.Drop("b")
	if signalled(a) || !signalled(b) {
		t.Fatal("changes to b must signal b's watch only, once pending")
	}
	stopA()
	c.Appended("a", cacheEvents("a", 2, 2))
	if signalled(a) {
		t.Fatal("a stopped watch was signalled")
	}
	if _, ok := c.watchers["a"]; ok {
		t.Fatal("a stream with no watch left is still watched")
	}
	if evs, ok := c.Load("a", 1); !ok || len(evs) != 2 {
		t.Fatalf("the cache holds %d events of a (cached %v), want 2", len(evs), ok)
	}
}

// Completed turns pass through the cache without pushing out the streams
// turns keep folding, and the latest completed turn is still there for
// whoever awaits its reply.
func TestStreamCacheCompletedTurnsGoFirst(t *testing.T) {
	size := eventSize(cacheEvents("sender-0", 1, 1)[0])
	c := New(16 * size) // ten senders, a turn in flight, a completed one
	c.SetLive(true)
	for s := range 10 {
		stream := fmt.Sprintf("sender-%d", s)
		c.Loaded(c.Token(), stream, 1, cacheEvents(stream, 1, 1))
	}
	completed := (turn.TurnCompleted{}).EventType()
	for i := range 50 {
		stream := fmt.Sprintf("turn-%d", i)
		evs := cacheEvents(stream, 1, 3)
		evs[2].Type = completed
		c.Appended(stream, evs[:2])
		c.Appended(stream, evs[2:])
		if evs, ok := c.Load(stream, 1); !ok || len(evs) != 3 {
			t.Fatalf("turn %d: its completed stream is not cached", i)
		}
	}
	for s := range 10 {
		if _, ok := c.Load(fmt.Sprintf("sender-%d", s), 1); !ok {
			t.Fatalf("sender %d's stream was pushed out by completed turns", s)
		}
	}
}

// Completed turns leave the cache oldest first: the one that completed
// last is still there after other turns' appends pushed older ones out,
// for whoever awaits its reply (the HTTP API reads it once its
// completion is readable).
func TestStreamCacheKeepsTheLatestCompletedTurn(t *testing.T) {
	size := eventSize(cacheEvents("sender-0", 1, 1)[0])
	c := New(20 * size)
	c.SetLive(true)
	for s := range 10 {
		stream := fmt.Sprintf("sender-%d", s)
		c.Loaded(c.Token(), stream, 1, cacheEvents(stream, 1, 1))
	}
	c.Appended("turn-0", cacheEvents("turn-0", 1, 1))
	completed := (turn.TurnCompleted{}).EventType()
	for i := range 50 {
		stream := fmt.Sprintf("turn-%d", i)
		evs := cacheEvents(stream, 1, 3)
		evs[2].Type = completed
		c.Appended(stream, evs[1:]) // its first event came with the turn before
		// The next turn starts meanwhile.
		next := fmt.Sprintf("turn-%d", i+1)
		c.Appended(next, cacheEvents(next, 1, 1))
		if evs, ok := c.Load(stream, 1); !ok || len(evs) != 3 {
			t.Fatalf("turn %d: its completed stream was pushed out by the turn after it", i)
		}
	}
	if _, ok := c.Load("turn-0", 1); ok {
		t.Error("the first completed turn outlived the later ones")
	}
	for s := range 10 {
		if _, ok := c.Load(fmt.Sprintf("sender-%d", s), 1); !ok {
			t.Fatalf("sender %d's stream was pushed out by completed turns", s)
		}
	}
}
