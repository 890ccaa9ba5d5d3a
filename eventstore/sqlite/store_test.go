package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/eventstore/storetest"
)

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := sqlite.Open(ctx, path, sqlite.Options{
		Logger:       slog.New(slog.NewTextHandler(t.Output(), nil)),
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return s
}

// SQLite admits one writer at a time, so the suite's tests that hold
// several appends open and commit them out of order cannot happen here;
// TestHeldAppend covers the property they protect (readers only ever see a
// prefix of the final order) for a serialized writer.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		return open(t, filepath.Join(t.TempDir(), "events.db"))
	}, storetest.Options{
		SerializedWriters: true,
		// Writers are serialized, so every random pre-commit delay is paid
		// by all of them in turn: 16 x 2000 events at up to 5 ms would run
		// for minutes. A smaller run still interleaves 16 streams through
		// the follower's batches and delivers while writers wait.
		GapWriters:         16,
		GapEventsPerWriter: 150,
		GapMaxDelay:        2 * time.Millisecond,
	})
}

// Two processes on one file, each with its own stream cache.
func TestStreamCache(t *testing.T) {
	storetest.RunStreamCache(t, func(t *testing.T) (storetest.Store, storetest.Store) {
		path := filepath.Join(t.TempDir(), "events.db")
		a, b := open(t, path), open(t, path)
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b
	})
}

func newEvent(t testing.TB, typ string, n int) domain.NewEvent {
	t.Helper()
	return domain.NewEvent{ID: uuid.New(), Type: typ, Data: []byte(fmt.Sprintf(`{"n":%d}`, n))}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOpenCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s := open(t, filepath.Join(dir, "events.db"))
	defer s.Close()
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Fatalf("directory mode = %v, want 0700", perm)
	}
	if _, err := s.Append(testCtx(t), "s", eventstore.NoStream, newEvent(t, "A", 1)); err != nil {
		t.Fatal(err)
	}
}

func TestReopenKeepsEvents(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "events.db")
	s := open(t, path)
	want := []domain.NewEvent{newEvent(t, "A", 1), newEvent(t, "B", 2)}
	if _, err := s.Append(ctx, "s", eventstore.NoStream, want...); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ctx, "c", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer s.Close()
	got, err := s.Load(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != want[0].ID || got[1].ID != want[1].ID {
		t.Fatalf("after reopen loaded %+v", got)
	}
	if p, err := s.Checkpoint(ctx, "c"); err != nil || p != 2 {
		t.Fatalf("checkpoint after reopen = %d, %v", p, err)
	}
	if _, err := s.Append(ctx, "s", eventstore.Exact(2), newEvent(t, "C", 3)); err != nil {
		t.Fatalf("append after reopen: %v", err)
	}
}

// TestTwoStoresOneFile stands in for two processes (omega serve and omega
// chat) on one file: each Open has its own write connection, so they
// contend for SQLite's file lock rather than for a Go pool.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "events.db")
	stores := []*sqlite.Store{open(t, path), open(t, path)}
	defer stores[0].Close()
	defer stores[1].Close()

	const writersPerStore, eventsPerWriter, racersPerStore, raceRounds = 4, 50, 4, 20
	var wg sync.WaitGroup
	for si, s := range stores {
		for w := range writersPerStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stream := fmt.Sprintf("own-%d-%d", si, w)
				for i := range eventsPerWriter {
					if _, err := s.Append(ctx, stream, eventstore.Exact(int64(i)), newEvent(t, "Own", i)); err != nil {
						t.Errorf("%s event %d: %v", stream, i, err)
						return
					}
				}
			}()
		}
	}
	// Meanwhile racers on both stores contend for each version of one
	// stream: exactly one may win a round, the rest must get a conflict.
	for round := range raceRounds {
		var wins, conflicts atomic.Int32
		var racers sync.WaitGroup
		start := make(chan struct{})
		for _, s := range stores {
			for r := range racersPerStore {
				racers.Add(1)
				go func() {
					defer racers.Done()
					<-start
					_, err := s.Append(ctx, "shared", eventstore.Exact(int64(round)), newEvent(t, "Shared", r))
					var ce *eventstore.ConcurrencyError
					switch {
					case err == nil:
						wins.Add(1)
					case errors.As(err, &ce) && ce.Actual == int64(round)+1:
						conflicts.Add(1)
					default:
						t.Errorf("round %d: %v", round, err)
					}
				}()
			}
		}
		close(start)
		racers.Wait()
		if wins.Load() != 1 || int(conflicts.Load()) != 2*racersPerStore-1 {
			t.Fatalf("round %d: %d wins, %d conflicts", round, wins.Load(), conflicts.Load())
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	for _, s := range stores {
		var all []domain.Event
		var after int64
		for {
			batch, err := s.ReadAll(ctx, after, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) == 0 {
				break
			}
			all = append(all, batch...)
			after = batch[len(batch)-1].Position
		}
		own := len(stores) * writersPerStore * eventsPerWriter
		if len(all) != own+raceRounds {
			t.Fatalf("log holds %d events, want %d own + %d shared", len(all), own, raceRounds)
		}
		last := map[string]int64{}
		for i, e := range all {
			if i > 0 && e.Position <= all[i-1].Position {
				t.Fatalf("positions out of order: %d after %d", e.Position, all[i-1].Position)
			}
			if e.Version != last[e.StreamID]+1 {
				t.Fatalf("stream %s: version %d after %d", e.StreamID, e.Version, last[e.StreamID])
			}
			last[e.StreamID] = e.Version
		}
	}
}

// TestForeignCommitSignals checks that a commit made through another store
// on the same file wakes this store's Changes via PRAGMA data_version.
func TestForeignCommitSignals(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "events.db")
	writer, reader := open(t, path), open(t, path)
	defer writer.Close()
	defer reader.Close()

	changes := reader.Changes(ctx)
	time.Sleep(50 * time.Millisecond) // let the poller settle on the opened file
	select {
	case <-changes:
	default:
	}
	if _, err := writer.Append(ctx, "s", eventstore.Any, newEvent(t, "A", 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no change signal for a commit made through another connection")
	}
	if got, err := reader.ReadAll(ctx, 0, 10); err != nil || len(got) != 1 {
		t.Fatalf("ReadAll = %d events, %v", len(got), err)
	}
}

// TestHeldAppend is the serialized-writer form of the suite's held-open
// tests: while one append holds its transaction, other writers wait and
// readers see only what was committed before it; a rolled-back append is
// never seen and the next commit follows on without a hole being skipped.
func TestHeldAppend(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollback=%v", rollback), func(t *testing.T) {
			ctx := testCtx(t)
			s := open(t, filepath.Join(t.TempDir(), "events.db"))
			defer s.Close()
			if _, err := s.Append(ctx, "first", eventstore.Any, newEvent(t, "First", 0)); err != nil {
				t.Fatal(err)
			}

			written, release := make(chan struct{}), make(chan struct{})
			hctx := eventstore.WithBeforeCommit(ctx, func() error {
				close(written)
				<-release
				if rollback {
					return errors.New("rolled back on purpose")
				}
				return nil
			})
			heldDone := make(chan error, 1)
			go func() {
				_, err := s.Append(hctx, "held", eventstore.Any, newEvent(t, "Held", 1), newEvent(t, "Held", 2))
				heldDone <- err
			}()
			<-written

			otherDone := make(chan error, 1)
			go func() {
				_, err := s.Append(ctx, "other", eventstore.Any, newEvent(t, "Other", 3))
				otherDone <- err
			}()
			time.Sleep(50 * time.Millisecond)
			select {
			case err := <-otherDone:
				t.Fatalf("an append committed while another held the write lock: %v", err)
			default:
			}
			if got, err := s.ReadAll(ctx, 0, 10); err != nil || len(got) != 1 || got[0].StreamID != "first" {
				t.Fatalf("while held, ReadAll = %+v, %v; want only the first event", got, err)
			}

			close(release)
			if err := <-heldDone; (err != nil) != rollback {
				t.Fatalf("held append: %v", err)
			}
			if err := <-otherDone; err != nil {
				t.Fatal(err)
			}
			want := []string{"first", "held", "held", "other"}
			if rollback {
				want = []string{"first", "other"}
			}
			got, err := s.ReadAll(ctx, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			var streams []string
			for _, e := range got {
				streams = append(streams, e.StreamID)
			}
			if strings.Join(streams, ",") != strings.Join(want, ",") {
				t.Fatalf("log order = %v, want %v", streams, want)
			}
		})
	}
}
