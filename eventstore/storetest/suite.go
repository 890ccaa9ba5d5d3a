// Package storetest is the conformance suite every event store backend
// must pass. Backends call Run from their own tests with a factory that
// returns a fresh, empty store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// Store is what the suite needs from a backend.
type Store interface {
	eventstore.Store
	eventstore.Checkpoints
}

// Options scales the heavier tests to the backend: SQLite serializes
// writers, so holding each transaction open for milliseconds costs it far
// more wall time than PostgreSQL.
type Options struct {
	// SerializedWriters marks a backend that admits one writing
	// transaction at a time (SQLite): a second append waits for the first
	// to commit, so the tests that hold several appends open at once and
	// commit them out of order cannot happen there and are skipped.
	SerializedWriters bool

	GapWriters         int // default 16
	GapEventsPerWriter int // default 2000
	GapMaxDelay        time.Duration
}

func (o Options) withDefaults() Options {
	if o.GapWriters == 0 {
		o.GapWriters = 16
	}
	if o.GapEventsPerWriter == 0 {
		o.GapEventsPerWriter = 2000
	}
	if o.GapMaxDelay == 0 {
		o.GapMaxDelay = 5 * time.Millisecond
	}
	return o
}

// Run runs the whole suite. newStore must return an empty store that the
// test owns (it is closed by the suite).
func Run(t *testing.T, newStore func(t *testing.T) Store, opts Options) {
	opts = opts.withDefaults()
	tests := []struct {
		name       string
		fn         func(*testing.T, Store)
		concurrent bool // needs several appends open at once
	}{
		{"AppendAndLoad", testAppendAndLoad, false},
		{"ExpectedVersion", testExpectedVersion, false},
		{"InvalidAppend", testInvalidAppend, false},
		{"ConcurrentConflicts", testConcurrentConflicts, false},
		{"GlobalOrder", testGlobalOrder, false},
		{"UniqueEventIDs", testUniqueEventIDs, false},
		{"LargeAndUnicodePayloads", testPayloads, false},
		{"RollbackLeavesNothing", testRollback, false},
		{"Checkpoints", testCheckpoints, false},
		{"ReverseCommitInterleaving", testReverseCommit, true},
		{"HeldOpenReservation", testHeldOpenReservation, true},
		{"GapFollow", func(t *testing.T, s Store) { testGapFollow(t, s, opts) }, false},
		{"ConcurrentFollowNoHook", testConcurrentFollow, false},
		{"SharedFollowers", testSharedFollowers, false},
		{"Settle", func(t *testing.T, s Store) { testSettle(t, s, opts) }, false},
		{"AppendHandedToTheTail", func(t *testing.T, s Store) { testHandedToTheTail(t, s, opts) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.concurrent && opts.SerializedWriters {
				t.Skip("needs two appends open at once; this backend serializes writers")
			}
			s := newStore(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

func ev(t testing.TB, typ string, data any) domain.NewEvent {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return domain.NewEvent{ID: uuid.New(), Type: typ, Data: raw, Metadata: domain.Metadata{CorrelationID: "c-" + typ}}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func testAppendAndLoad(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	assertMissing(ctx, t, s, "s-1")
	in := []domain.NewEvent{ev(t, "A", map[string]int{"n": 1}), ev(t, "B", map[string]int{"n": 2}), ev(t, "C", map[string]int{"n": 3})}
	in[1].Metadata = domain.Metadata{CorrelationID: "turn-1", CausationID: in[0].ID.String(), Channel: "telegram", Sender: "42", Project: "p", SchemaVersion: 2}
	before := time.Now().Add(-time.Minute)
	res, err := s.Append(ctx, "s-1", eventstore.NoStream, in...)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if res.FromVersion != 1 || res.ToVersion != 3 || len(res.Positions) != 3 {
		t.Fatalf("append result = %+v", res)
	}
	got, err := s.Load(ctx, "s-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("loaded %d events, want 3", len(got))
	}
	for i, e := range got {
		assertLoaded(t, i, e, in[i], res.Positions[i], before)
	}
	tail, err := s.Load(ctx, "s-1", 3)
	if err != nil || len(tail) != 1 || tail[0].Version != 3 {
		t.Fatalf("Load from version 3 = %v, %v", tail, err)
	}
	if v, err := s.StreamVersion(ctx, "s-1"); err != nil || v != 3 {
		t.Fatalf("StreamVersion = %d, %v; want 3", v, err)
	}
}

// assertMissing checks that a stream never written reads as empty.
func assertMissing(ctx context.Context, t *testing.T, s Store, stream string) {
	t.Helper()
	if v, err := s.StreamVersion(ctx, stream); err != nil || v != 0 {
		t.Fatalf("StreamVersion of missing stream = %d, %v; want 0, nil", v, err)
	}
	if got, err := s.Load(ctx, stream, 1); err != nil || len(got) != 0 {
		t.Fatalf("Load of missing stream = %v, %v", got, err)
	}
}

// assertLoaded checks that event i of stream s-1 came back as written.
func assertLoaded(t *testing.T, i int, e domain.Event, in domain.NewEvent, pos int64, before time.Time) {
	t.Helper()
	if e.StreamID != "s-1" || e.Version != int64(i+1) || e.ID != in.ID || e.Type != in.Type || e.Position != pos {
		t.Errorf("event %d = %+v", i, e)
	}
	assertJSONEqual(t, in.Data, e.Data)
	if e.Metadata != in.Metadata {
		t.Errorf("event %d metadata = %+v, want %+v", i, e.Metadata, in.Metadata)
	}
	if e.RecordedAt.Before(before) || e.RecordedAt.After(time.Now().Add(time.Minute)) {
		t.Errorf("event %d recorded at %v", i, e.RecordedAt)
	}
}

func testExpectedVersion(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	if _, err := s.Append(ctx, "s", eventstore.NoStream, ev(t, "A", 1)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		expected eventstore.ExpectedVersion
		wantErr  bool
	}{
		{"no stream on existing stream", eventstore.NoStream, true},
		{"exact behind", eventstore.Exact(0), true},
		{"exact ahead", eventstore.Exact(5), true},
		{"exact current", eventstore.Exact(1), false},
		{"any", eventstore.Any, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := s.StreamVersion(ctx, "s")
			_, err := s.Append(ctx, "s", c.expected, ev(t, "B", 2))
			if !c.wantErr {
				if err != nil {
					t.Fatalf("append: %v", err)
				}
				return
			}
			var ce *eventstore.ConcurrencyError
			if !errors.As(err, &ce) || !errors.Is(err, eventstore.ErrConcurrency) {
				t.Fatalf("err = %v, want *ConcurrencyError", err)
			}
			if ce.Stream != "s" || ce.Expected != c.expected || ce.Actual != before {
				t.Fatalf("conflict = %+v, want stream s, expected %v, actual %d", ce, c.expected, before)
			}
			if after, _ := s.StreamVersion(ctx, "s"); after != before {
				t.Fatalf("a conflicting append changed the version from %d to %d", before, after)
			}
		})
	}
}

func testInvalidAppend(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	bad := []struct {
		name   string
		stream string
		events []domain.NewEvent
	}{
		{"empty stream", "", []domain.NewEvent{ev(t, "A", 1)}},
		{"no events", "s", nil},
		{"no type", "s", []domain.NewEvent{{ID: uuid.New(), Data: []byte(`{}`)}}},
		{"no data", "s", []domain.NewEvent{{ID: uuid.New(), Type: "A"}}},
	}
	for _, b := range bad {
		if _, err := s.Append(ctx, b.stream, eventstore.Any, b.events...); !errors.Is(err, eventstore.ErrInvalidAppend) {
			t.Errorf("%s: err = %v, want ErrInvalidAppend", b.name, err)
		}
	}
	if got, _ := s.ReadAll(ctx, 0, 10); len(got) != 0 {
		t.Fatalf("invalid appends wrote %d events", len(got))
	}
}

func testConcurrentConflicts(t *testing.T, s Store) {
	ctx := ctxT(t, 60*time.Second)
	const racers, rounds = 20, 10
	for round := 0; round < rounds; round++ {
		var wins, conflicts atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.Append(ctx, "race", eventstore.Exact(int64(round)), ev(t, "Won", i))
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, eventstore.ErrConcurrency):
					conflicts.Add(1)
				default:
					t.Errorf("round %d racer %d: %v", round, i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load() != racers-1 {
			t.Fatalf("round %d: %d wins, %d conflicts; want 1 and %d", round, wins.Load(), conflicts.Load(), racers-1)
		}
	}
	if v, _ := s.StreamVersion(ctx, "race"); v != rounds {
		t.Fatalf("version = %d, want %d", v, rounds)
	}
}

func testGlobalOrder(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	for i := 0; i < 30; i++ {
		stream := fmt.Sprintf("o-%d", i%3)
		if _, err := s.Append(ctx, stream, eventstore.Any, ev(t, "E", i), ev(t, "E", i)); err != nil {
			t.Fatal(err)
		}
	}
	all := readAll(t, ctx, s, 7)
	if len(all) != 60 {
		t.Fatalf("read %d events, want 60", len(all))
	}
	seen := map[int64]bool{}
	last := map[string]int64{}
	for _, e := range all {
		if seen[e.Position] {
			t.Fatalf("position %d delivered twice", e.Position)
		}
		seen[e.Position] = true
		if e.Version != last[e.StreamID]+1 {
			t.Fatalf("stream %s: version %d follows %d in global order", e.StreamID, e.Version, last[e.StreamID])
		}
		last[e.StreamID] = e.Version
	}
	// Reading from the middle continues exactly where the prefix stopped.
	mid := all[29].Position
	rest, err := s.ReadAll(ctx, mid, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 30 || rest[0].ID != all[30].ID {
		t.Fatalf("ReadAll after %d returned %d events starting at %v", mid, len(rest), rest)
	}
}

func testUniqueEventIDs(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	e := ev(t, "A", 1)
	if _, err := s.Append(ctx, "u-1", eventstore.Any, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "u-2", eventstore.Any, ev(t, "B", 1), e); err == nil {
		t.Fatal("appending a duplicate event id succeeded")
	}
	if v, _ := s.StreamVersion(ctx, "u-2"); v != 0 {
		t.Fatalf("failed append left u-2 at version %d", v)
	}
	ids := map[uuid.UUID]bool{}
	for _, e := range readAll(t, ctx, s, 100) {
		if ids[e.ID] {
			t.Fatalf("event id %s stored twice", e.ID)
		}
		ids[e.ID] = true
	}
}

func testPayloads(t *testing.T, s Store) {
	ctx := ctxT(t, 60*time.Second)
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	payloads := []any{
		map[string]string{"text": big},
		map[string]string{"text": "héllo wörld — 你好世界 — مرحبا — 🚀🎉👩‍👩‍👧 — Ω≈ç√∫"},
		map[string]string{"text": "nul \u0000 byte and \"quotes\" and \\ and \n newlines \t tabs"},
		[]any{1.5, "x", nil, true, map[string]any{"nested": []int{1, 2, 3}}},
	}
	for i, p := range payloads {
		e := ev(t, "P", p)
		e.Metadata.Sender = "séñor-🚀"
		stream := fmt.Sprintf("pay-ü-%d-🚀", i)
		if _, err := s.Append(ctx, stream, eventstore.NoStream, e); err != nil {
			t.Fatalf("payload %d: %v", i, err)
		}
		got, err := s.Load(ctx, stream, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("payload %d: load = %d events, %v", i, len(got), err)
		}
		assertJSONEqual(t, e.Data, got[0].Data)
		if got[0].Metadata.Sender != "séñor-🚀" {
			t.Fatalf("metadata sender = %q", got[0].Metadata.Sender)
		}
	}
}

func testRollback(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	boom := errors.New("boom")
	hctx := eventstore.WithBeforeCommit(ctx, func() error { return boom })
	if _, err := s.Append(hctx, "r", eventstore.Any, ev(t, "A", 1)); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the hook's error", err)
	}
	if v, _ := s.StreamVersion(ctx, "r"); v != 0 {
		t.Fatalf("rolled back append left version %d", v)
	}
	if _, err := s.Append(ctx, "r", eventstore.NoStream, ev(t, "A", 2)); err != nil {
		t.Fatalf("append after rollback: %v", err)
	}
}

func testCheckpoints(t *testing.T, s Store) {
	ctx := ctxT(t, 30*time.Second)
	if p, err := s.Checkpoint(ctx, "c"); err != nil || p != 0 {
		t.Fatalf("new checkpoint = %d, %v", p, err)
	}
	for _, pos := range []int64{5, 9, 12} {
		if err := s.SaveCheckpoint(ctx, "c", pos); err != nil {
			t.Fatal(err)
		}
		if p, err := s.Checkpoint(ctx, "c"); err != nil || p != pos {
			t.Fatalf("checkpoint = %d, %v; want %d", p, err, pos)
		}
	}
	if p, _ := s.Checkpoint(ctx, "other"); p != 0 {
		t.Fatalf("checkpoints leak between consumers: %d", p)
	}
}

// follower collects what Follow delivers, checking nothing arrives twice.
type follower struct {
	mu     sync.Mutex
	got    []domain.Event
	seen   map[uuid.UUID]bool
	dupErr error
}

func follow(ctx context.Context, s Store, batch int) (*follower, <-chan error) {
	return followSlowly(ctx, s, batch, 0)
}

func (f *follower) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

// waitFor polls until the follower has n events or the deadline passes.
func (f *follower) waitFor(t *testing.T, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for f.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("follower has %d events, want %d", f.count(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// check compares what the follower saw with the log's final order.
func (f *follower) check(t *testing.T, ctx context.Context, s Store, want int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dupErr != nil {
		t.Fatal(f.dupErr)
	}
	final := readAll(t, ctx, s, 1000)
	if len(final) != want {
		t.Fatalf("log holds %d events, want %d", len(final), want)
	}
	if len(f.got) != len(final) {
		t.Fatalf("follower received %d events, log holds %d", len(f.got), len(final))
	}
	for i := range final {
		if f.got[i].ID != final[i].ID {
			t.Fatalf("delivery %d: got position %d, log order has position %d", i, f.got[i].Position, final[i].Position)
		}
	}
	last := map[string]int64{}
	for _, e := range f.got {
		if e.Version != last[e.StreamID]+1 {
			t.Fatalf("stream %s: version %d delivered after %d", e.StreamID, e.Version, last[e.StreamID])
		}
		last[e.StreamID] = e.Version
	}
}

// heldAppend starts an append that stays uncommitted until release is
// closed (or rolls back if rollback is set). It returns once the rows are
// written.
func heldAppend(t *testing.T, ctx context.Context, s Store, stream string, n int, release <-chan struct{}, rollback bool) <-chan error {
	written := make(chan struct{})
	done := make(chan error, 1)
	hctx := eventstore.WithBeforeCommit(ctx, func() error {
		close(written)
		<-release
		if rollback {
			return errors.New("rolled back on purpose")
		}
		return nil
	})
	events := make([]domain.NewEvent, n)
	for i := range events {
		events[i] = ev(t, "Held", map[string]any{"stream": stream, "i": i})
	}
	go func() {
		_, err := s.Append(hctx, stream, eventstore.Any, events...)
		done <- err
	}()
	select {
	case <-written:
	case err := <-done:
		t.Fatalf("held append %s finished early: %v", stream, err)
	case <-ctx.Done():
		t.Fatalf("held append %s never wrote", stream)
	}
	return done
}

func testReverseCommit(t *testing.T, s Store) {
	ctx := ctxT(t, 60*time.Second)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	f, _ := follow(fctx, s, 3)

	relA, relB, relR, relC := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	doneA := heldAppend(t, ctx, s, "tx-a", 2, relA, false)
	doneB := heldAppend(t, ctx, s, "tx-b", 2, relB, false)
	doneR := heldAppend(t, ctx, s, "tx-r", 2, relR, true)
	doneC := heldAppend(t, ctx, s, "tx-c", 2, relC, false)

	close(relC)
	must(t, <-doneC)
	time.Sleep(30 * time.Millisecond)
	close(relB)
	must(t, <-doneB)
	close(relR)
	if err := <-doneR; err == nil {
		t.Fatal("rollback append committed")
	}
	time.Sleep(30 * time.Millisecond)
	close(relA)
	must(t, <-doneA)

	f.waitFor(t, 6, 10*time.Second)
	time.Sleep(50 * time.Millisecond) // anything extra would show up now
	f.check(t, ctx, s, 6)
	for _, e := range f.got {
		if e.StreamID == "tx-r" {
			t.Fatal("a rolled-back event was delivered")
		}
	}
}

func testHeldOpenReservation(t *testing.T, s Store) {
	ctx := ctxT(t, 60*time.Second)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	f, _ := follow(fctx, s, 10)

	release := make(chan struct{})
	held := heldAppend(t, ctx, s, "held", 3, release, false)
	for i := 0; i < 50; i++ {
		if _, err := s.Append(ctx, fmt.Sprintf("other-%d", i%5), eventstore.Any, ev(t, "Other", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever the follower got while the reservation was open must stay a
	// prefix of the final order: check() verifies that after the commit.
	time.Sleep(100 * time.Millisecond)
	close(release)
	must(t, <-held)
	f.waitFor(t, 53, 10*time.Second)
	time.Sleep(50 * time.Millisecond)
	f.check(t, ctx, s, 53)
}

// testSettle: after Settle, ReadAll returns every event committed before
// the call, and Settle waits for a transaction that holds them back.
func testSettle(t *testing.T, s Store, o Options) {
	ctx := ctxT(t, 30*time.Second)
	names := func() []string {
		var out []string
		for _, e := range readAll(t, ctx, s, 100) {
			out = append(out, e.StreamID)
		}
		return out
	}
	if _, err := s.Append(ctx, "settle-first", eventstore.Any, ev(t, "Settled", 1)); err != nil {
		t.Fatal(err)
	}
	must(t, s.Settle(ctx))
	if got := names(); !slices.Equal(got, []string{"settle-first"}) {
		t.Fatalf("after the first settle ReadAll returned %v", got)
	}
	if o.SerializedWriters {
		return // no transaction can be open beside a committed later one
	}
	release := make(chan struct{})
	held := heldAppend(t, ctx, s, "settle-held", 1, release, false)
	if _, err := s.Append(ctx, "settle-after", eventstore.Any, ev(t, "Settled", 2)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Settle(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("settle with a transaction held open: %v, want the deadline", err)
	}
	settled := make(chan error, 1)
	go func() { settled <- s.Settle(ctx) }()
	select {
	case err := <-settled:
		t.Fatalf("settle returned (%v) while a transaction older than the call was open", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	must(t, <-held)
	must(t, <-settled)
	if got := names(); len(got) != 3 {
		t.Fatalf("after settling ReadAll returned %v, want all three streams", got)
	}
}

// testHandedToTheTail: an append committed while no older transaction can
// still commit is in the shared Tail's window when Append returns, without
// a read of the log; one committed behind an older open append is not
// (something may still come before it), and the followers then see both in
// delivery order.
func testHandedToTheTail(t *testing.T, s Store, o Options) {
	shared, ok := s.(interface{ Tail() *eventstore.Tail })
	if !ok || shared.Tail() == nil {
		t.Skip("the store has no shared Tail")
	}
	tail := shared.Tail()
	ctx := ctxT(t, 60*time.Second)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	f, _ := follow(fctx, s, 100)
	within(t, 10*time.Second, "the Tail to start", func() bool { return tail.Holds(0) })

	// On PostgreSQL any transaction of the server (another test's) holds
	// the horizon back while it runs, so an append may have to wait for a
	// read like any other change: one of several must be handed over.
	appended := 0
	within(t, 10*time.Second, "an append handed to the Tail", func() bool {
		res, err := s.Append(ctx, "tail-direct", eventstore.Any, ev(t, "Direct", appended))
		must(t, err)
		appended++
		return tail.Holds(res.Positions[0])
	})
	if o.SerializedWriters {
		f.waitFor(t, appended, 10*time.Second)
		f.check(t, ctx, s, appended)
		return
	}
	release := make(chan struct{})
	held := heldAppend(t, ctx, s, "tail-held", 2, release, false)
	res, err := s.Append(ctx, "tail-behind", eventstore.Any, ev(t, "Behind", 0))
	must(t, err)
	if tail.Holds(res.Positions[0]) {
		t.Fatal("an append committed behind an open older transaction was handed to the Tail")
	}
	close(release)
	must(t, <-held)
	f.waitFor(t, appended+3, 10*time.Second)
	time.Sleep(20 * time.Millisecond)
	f.check(t, ctx, s, appended+3)
}

// within polls cond until it holds, failing the test after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testGapFollow(t *testing.T, s Store, o Options) {
	total := o.GapWriters * o.GapEventsPerWriter
	ctx := ctxT(t, 5*time.Minute)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	f, _ := follow(fctx, s, 500)

	var wg sync.WaitGroup
	for w := 0; w < o.GapWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			hctx := eventstore.WithBeforeCommit(ctx, func() error {
				time.Sleep(time.Duration(rng.Int64N(int64(o.GapMaxDelay) + 1)))
				return nil
			})
			stream := fmt.Sprintf("gap-%d", w)
			for i := 0; i < o.GapEventsPerWriter; i++ {
				if _, err := s.Append(hctx, stream, eventstore.Exact(int64(i)), ev(t, "Gap", i)); err != nil {
					t.Errorf("writer %d event %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	f.waitFor(t, total, 60*time.Second)
	time.Sleep(50 * time.Millisecond)
	f.check(t, ctx, s, total)
}

// testConcurrentFollow is the gap test without a commit hook, so backends
// that take a faster path when no hook is set are checked on it too.
func testConcurrentFollow(t *testing.T, s Store) {
	const writers, each = 16, 300
	ctx := ctxT(t, 2*time.Minute)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	f, _ := follow(fctx, s, 200)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := s.Append(ctx, fmt.Sprintf("nohook-%d", w), eventstore.Exact(int64(i)), ev(t, "NoHook", i)); err != nil {
					t.Errorf("writer %d event %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	f.waitFor(t, writers*each, 60*time.Second)
	time.Sleep(50 * time.Millisecond)
	f.check(t, ctx, s, writers*each)
}

// testSharedFollowers runs several followers of one store at once, as a
// process does (projections, reply watcher, task follower): with
// different batch sizes, one slow enough to fall behind the shared
// reader's window and one started halfway through, while writers append.
// Each must see the whole log in delivery order, once.
func testSharedFollowers(t *testing.T, s Store) {
	const writers, each = 8, 400
	ctx := ctxT(t, 2*time.Minute)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	fast, _ := follow(fctx, s, 200)
	small, _ := follow(fctx, s, 7)
	slow, _ := followSlowly(fctx, s, 50, 5*time.Millisecond)
	var late *follower
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if w == 0 && i == each/2 {
					late, _ = follow(fctx, s, 100)
				}
				if _, err := s.Append(ctx, fmt.Sprintf("shared-%d", w), eventstore.Exact(int64(i)), ev(t, "Shared", i)); err != nil {
					t.Errorf("writer %d event %d: %v", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for name, f := range map[string]*follower{"fast": fast, "small batches": small, "slow": slow, "late": late} {
		t.Run(name, func(t *testing.T) {
			f.waitFor(t, writers*each, 60*time.Second)
			time.Sleep(20 * time.Millisecond)
			f.check(t, ctx, s, writers*each)
		})
	}
}

// followSlowly follows the log from its start, pausing after every batch
// (0: no pause), and records what it is given.
func followSlowly(ctx context.Context, s Store, batch int, pause time.Duration) (*follower, <-chan error) {
	f := &follower{seen: map[uuid.UUID]bool{}}
	done := make(chan error, 1)
	go func() {
		done <- eventstore.Follow(ctx, s, 0, eventstore.FollowOptions{BatchSize: batch, PollInterval: 20 * time.Millisecond},
			func(_ context.Context, evs []domain.Event) (int64, error) {
				if pause > 0 {
					time.Sleep(pause)
				}
				f.mu.Lock()
				defer f.mu.Unlock()
				for _, e := range evs {
					if f.seen[e.ID] && f.dupErr == nil {
						f.dupErr = fmt.Errorf("event %s (position %d) delivered twice", e.ID, e.Position)
					}
					f.seen[e.ID] = true
					f.got = append(f.got, e)
				}
				return evs[len(evs)-1].Position, nil
			})
	}()
	return f, done
}

// readAll reads the whole log, settled first: a transaction still open
// elsewhere in the database (another test's, in parallel) would otherwise
// hold back events these tests just committed.
func readAll(t *testing.T, ctx context.Context, s Store, batch int) []domain.Event {
	t.Helper()
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	var out []domain.Event
	var after int64
	for {
		evs, err := s.ReadAll(ctx, after, batch)
		if err != nil {
			t.Fatalf("ReadAll after %d: %v", after, err)
		}
		out = append(out, evs...)
		if len(evs) < batch {
			return out
		}
		after = evs[len(evs)-1].Position
	}
}

func assertJSONEqual(t *testing.T, want, got json.RawMessage) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("bad want json: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("stored data is not JSON: %v", err)
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if string(wb) != string(gb) {
		n := min(len(gb), 200)
		t.Fatalf("payload changed: got %s...", gb[:n])
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
