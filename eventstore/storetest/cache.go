package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// RunStreamCache checks a backend's stream cache with two stores on one
// database, as two processes would open it: pair returns them (both
// closed by the caller's cleanup). A backend without a cache is skipped.
func RunStreamCache(t *testing.T, pair func(t *testing.T) (Store, Store)) {
	tests := []struct {
		name string
		fn   func(*testing.T, Store, Store)
	}{
		{"LoadsWhatTheDatabaseHolds", testCacheMatchesDatabase},
		{"SeesTheOtherProcess", testCacheSeesOtherProcess},
		{"ConflictReadsTheDatabase", testCacheConflict},
		{"FreshReadsSeeTheOtherProcessAtOnce", testCacheFreshReads},
		{"VersionOfAnEmptyStream", testCacheEmptyStream},
		{"NoReaderIsAheadOfALoad", testCacheBehindNoReader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pair(t)
			if _, ok := a.(eventstore.CachedLoader); !ok {
				t.Skip("this backend keeps no streams in memory")
			}
			ctx := ctxT(t, time.Minute)
			followEnd(ctx, a)
			followEnd(ctx, b)
			waitLive(t, ctx, a)
			waitLive(t, ctx, b)
			tc.fn(t, a, b)
		})
	}
}

// eventually polls cond until it holds, failing with what when ctx ends
// first.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal(what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// followEnd keeps a follower at the end of the log, so that the store's
// shared reader, and with it its cache, is live.
func followEnd(ctx context.Context, s Store) {
	go func() {
		_ = eventstore.Follow(ctx, s, 0, eventstore.FollowOptions{PollInterval: 20 * time.Millisecond},
			func(_ context.Context, evs []domain.Event) (int64, error) { return evs[len(evs)-1].Position, nil })
	}()
}

// waitLive appends probes until one is kept in memory: from then on the
// cache is in use, so the tests below exercise it rather than pass
// through to the database.
func waitLive(t *testing.T, ctx context.Context, s Store) {
	t.Helper()
	i := 0
	eventually(t, ctx, "the stream cache never became live", func() bool {
		i++
		stream := fmt.Sprintf("probe-%p-%d", s, i)
		if _, err := s.Append(ctx, stream, eventstore.NoStream, ev(t, "Probe", i)); err != nil {
			t.Fatal(err)
		}
		_, ok := s.(eventstore.CachedLoader).LoadCached(stream)
		return ok
	})
}

// fromLog is a stream as the global log holds it (ReadAll always reads
// the database), once it holds n events: on PostgreSQL a commit becomes
// readable in the global order only when older transactions of the whole
// cluster have ended.
func fromLog(t *testing.T, ctx context.Context, s Store, stream string, n int) []domain.Event {
	t.Helper()
	var out []domain.Event
	eventually(t, ctx, fmt.Sprintf("the log never showed %d events of %s", n, stream), func() bool {
		out = readStream(t, ctx, s, stream)
		return len(out) >= n
	})
	return out
}

func readStream(t *testing.T, ctx context.Context, s Store, stream string) []domain.Event {
	t.Helper()
	var out []domain.Event
	var after int64
	for {
		evs, err := s.ReadAll(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return out
		}
		for _, e := range evs {
			if e.StreamID == stream {
				out = append(out, e)
			}
		}
		after = evs[len(evs)-1].Position
	}
}

func load(t *testing.T, ctx context.Context, s Store, stream string, from int64) []domain.Event {
	t.Helper()
	evs, err := s.Load(ctx, stream, from)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// sameEvents compares envelopes field by field (times by instant).
func sameEvents(t *testing.T, what string, got, want []domain.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.RecordedAt.Equal(w.RecordedAt) {
			t.Errorf("%s: event %d recorded at %v, want %v", what, i, g.RecordedAt, w.RecordedAt)
		}
		g.RecordedAt, w.RecordedAt = time.Time{}, time.Time{}
		if string(g.Data) != string(w.Data) {
			t.Errorf("%s: event %d data %s, want %s", what, i, g.Data, w.Data)
		}
		g.Data, w.Data = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: event %d\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

// A stream written here loads from memory exactly as the database holds
// it: positions, versions, ids, data, metadata and recording times.
func testCacheMatchesDatabase(t *testing.T, a, _ Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-1"
	if _, err := a.Append(ctx, stream, eventstore.NoStream, ev(t, "One", 1), ev(t, "Two", "zwei ✓")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, stream, eventstore.Exact(2), ev(t, "Three", map[string]any{"n": 3})); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(eventstore.CachedLoader).LoadCached(stream); !ok {
		t.Fatal("a stream this process wrote is not in memory")
	}
	want := fromLog(t, ctx, a, stream, 3)
	sameEvents(t, "whole stream", load(t, ctx, a, stream, 1), want)
	sameEvents(t, "from version 2", load(t, ctx, a, stream, 2), want[1:])
	if evs := load(t, ctx, a, stream, 4); len(evs) != 0 {
		t.Errorf("past the end: %d events", len(evs))
	}
	if v, err := a.StreamVersion(ctx, stream); err != nil || v != 3 {
		t.Errorf("version %d (%v), want 3", v, err)
	}
}

// Another process's append reaches this process's copy once its reader
// has read it, and never skips an event.
func testCacheSeesOtherProcess(t *testing.T, a, b Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-2"
	if _, err := a.Append(ctx, stream, eventstore.NoStream, ev(t, "Mine", 1)); err != nil {
		t.Fatal(err)
	}
	_ = load(t, ctx, a, stream, 1)
	for i := 2; i <= 4; i++ {
		if _, err := b.Append(ctx, stream, eventstore.Exact(int64(i-1)), ev(t, "Theirs", i)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, ctx, "the other process's events never reached this process's copy", func() bool {
		return len(load(t, ctx, a, stream, 1)) == 4
	})
	sameEvents(t, "after the other process wrote", load(t, ctx, a, stream, 1), fromLog(t, ctx, a, stream, 4))
	if v, err := a.StreamVersion(ctx, stream); err != nil || v != 4 {
		t.Errorf("version %d (%v), want 4", v, err)
	}
}

// A decision on a copy the other process has moved fails on the
// database's version, and the next load reads the database.
func testCacheConflict(t *testing.T, a, b Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-3"
	if _, err := a.Append(ctx, stream, eventstore.NoStream, ev(t, "First", 1)); err != nil {
		t.Fatal(err)
	}
	_ = load(t, ctx, a, stream, 1)
	if _, err := b.Append(ctx, stream, eventstore.Exact(1), ev(t, "Second", 2)); err != nil {
		t.Fatal(err)
	}
	_, err := a.Append(ctx, stream, eventstore.Exact(1), ev(t, "Late", 3))
	var ce *eventstore.ConcurrencyError
	if !errors.As(err, &ce) || ce.Actual != 2 {
		t.Fatalf("append on a moved stream: %v, want a conflict at version 2", err)
	}
	sameEvents(t, "after the conflict", load(t, ctx, a, stream, 1), fromLog(t, ctx, a, stream, 2))
	if _, err := a.Append(ctx, stream, eventstore.Exact(2), ev(t, "Retried", 3)); err != nil {
		t.Fatalf("retry at the version read: %v", err)
	}
	sameEvents(t, "after the retry", load(t, ctx, a, stream, 1), fromLog(t, ctx, a, stream, 3))
}

// A load asked for fresh reads (a lease just taken over) shows the other
// process's append as soon as it committed, before this process's reader
// has read it, and the copy it leaves is current.
func testCacheFreshReads(t *testing.T, a, b Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-fresh"
	if _, err := a.Append(ctx, stream, eventstore.NoStream, ev(t, "Mine", 1)); err != nil {
		t.Fatal(err)
	}
	_ = load(t, ctx, a, stream, 1)
	if _, err := b.Append(ctx, stream, eventstore.Exact(1), ev(t, "Theirs", 2)); err != nil {
		t.Fatal(err)
	}
	got := load(t, eventstore.FreshReads(ctx), a, stream, 1)
	if len(got) != 2 || got[1].Type != "Theirs" {
		t.Fatalf("a fresh load right after the other process's append: %d events, want 2", len(got))
	}
	sameEvents(t, "the fresh load", got, fromLog(t, ctx, a, stream, 2))
	sameEvents(t, "the next load", load(t, ctx, a, stream, 1), got)
}

// An empty stream's version is known without a query, until the other
// process writes it.
func testCacheEmptyStream(t *testing.T, a, b Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-4"
	if v, err := a.StreamVersion(ctx, stream); err != nil || v != 0 {
		t.Fatalf("version %d (%v), want 0", v, err)
	}
	if evs := load(t, ctx, a, stream, 1); len(evs) != 0 {
		t.Fatalf("an empty stream loads %d events", len(evs))
	}
	if _, err := b.Append(ctx, stream, eventstore.NoStream, ev(t, "Theirs", 1)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the other process's first event never reached this process", func() bool {
		v, err := a.StreamVersion(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		return v == 1
	})
	sameEvents(t, "the first event", load(t, ctx, a, stream, 1), fromLog(t, ctx, a, stream, 1))
}

// A reader of the log that is ahead of the shared reader (one reading the
// log itself) never sees an event that a load right after does not show:
// what the reader read reaches the copy first.
func testCacheBehindNoReader(t *testing.T, a, b Store) {
	ctx := ctxT(t, 30*time.Second)
	const stream = "cached-5"
	res, err := a.Append(ctx, stream, eventstore.NoStream, ev(t, "Mine", 1))
	if err != nil {
		t.Fatal(err)
	}
	_ = load(t, ctx, a, stream, 1)
	for i := 2; i <= 20; i++ {
		if _, err := b.Append(ctx, stream, eventstore.Exact(int64(i-1)), ev(t, "Theirs", i)); err != nil {
			t.Fatal(err)
		}
		for seen := false; !seen; {
			evs, err := a.ReadAll(ctx, res.Positions[0], 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				seen = seen || (e.StreamID == stream && e.Version == int64(i))
			}
			if seen {
				if got := load(t, ctx, a, stream, 1); len(got) < i {
					t.Fatalf("the log showed version %d, a load after it %d events", i, len(got))
				}
			} else if ctx.Err() != nil {
				t.Fatal("the other process's event never became readable")
			}
		}
	}
}
