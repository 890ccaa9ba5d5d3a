package postgres

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/pgtest"
)

func newEvent(t *testing.T, typ string) domain.NewEvent {
	t.Helper()
	data, err := json.Marshal(map[string]string{"t": typ})
	if err != nil {
		t.Fatal(err)
	}
	return domain.NewEvent{ID: uuid.New(), Type: typ, Data: data}
}

// Another process's append must wake this process's followers.
func TestChangesSeesOtherProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := pgtest.DSN(t)
	quiet := Options{Logger: slog.New(slog.DiscardHandler)}
	writer, err := Open(ctx, dsn, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	reader, err := Open(ctx, dsn, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	changes := reader.Changes(ctx)
	// The listener connects in the background; keep appending until a
	// signal arrives rather than guessing when LISTEN is active.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := writer.Append(ctx, "x", eventstore.Any, newEvent(t, "X")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changes:
			return
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no change signal from another store on the same database")
		}
	}
}

func TestReadAllUnknownPosition(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Append(ctx, "a", eventstore.NoStream, newEvent(t, "A")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadAll(ctx, 999999, 10); err == nil {
		t.Fatal("ReadAll after a position that does not exist returned no error")
	}
	if _, err := s.ReadAll(ctx, 0, 0); err == nil {
		t.Fatal("ReadAll with limit 0 returned no error")
	}
}

// Appends with expected version Any never fail because another writer
// took the next version first.
func TestAppendAnyUnderContention(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.Append(ctx, "hot", eventstore.Any, newEvent(t, "H")); err != nil {
					t.Errorf("append Any: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v, err := s.StreamVersion(ctx, "hot"); err != nil || v != writers*each {
		t.Fatalf("version = %d, %v; want %d", v, err, writers*each)
	}
}
