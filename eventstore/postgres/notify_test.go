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

// A process that reads the log while it has appends to signal tells the
// other processes with that read, not in a transaction of its own, and
// the read's relaxed commit stays its own.
func TestReadCarriesTheChangeSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer, reader := twoStores(t)
	first, err := writer.Append(ctx, "a", eventstore.NoStream, newEvent(t, "A"))
	if err != nil {
		t.Fatal(err)
	}
	changes := reader.Changes(ctx)
	awaitListening(ctx, t, writer, changes, 1)
	holdSignals(writer)
	if _, err := writer.Append(ctx, "a", 1, newEvent(t, "B")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("the notifier sent a signal within its window")
	case <-time.After(100 * time.Millisecond):
	}
	evs, err := writer.tailRead(ctx, first.Positions[0], 10)
	if err != nil || len(evs) != 1 || evs[0].Type != "B" {
		t.Fatalf("tail read = %v, %v; want the event B", evs, err)
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("the read did not carry the pending signal")
	}
	if writer.notifier.take() {
		t.Fatal("the signal the read carried is still pending")
	}

	// A read that finds nothing signals all the same, and its relaxed
	// commit stays its own.
	conn, err := writer.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, readAfterSignalledSQL, evs[0].Position, 10, notifyChannel, "another process")
	if err != nil {
		t.Fatal(err)
	}
	if evs, err := scanEvents(rows); err != nil || len(evs) != 0 {
		t.Fatalf("read after the last event = %v, %v; want nothing", evs, err)
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("a read that found nothing did not send its signal")
	}
	var sync string
	if err := conn.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil || sync != "on" {
		t.Fatalf("synchronous_commit after a signalled read = %q, %v; want on", sync, err)
	}
}

// A store that closes sends the signal it still owes.
func TestClosingStoreSendsItsLastSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer, reader := twoStores(t)
	changes := reader.Changes(ctx)
	awaitListening(ctx, t, writer, changes, 0)
	holdSignals(writer)
	if _, err := writer.Append(ctx, "a", eventstore.NoStream, newEvent(t, "A")); err != nil {
		t.Fatal(err)
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("the closed store's last append was never signalled")
	}
}

// twoStores opens two stores on one database, as two processes would.
func twoStores(t *testing.T) (writer, reader *Store) {
	t.Helper()
	dsn := pgtest.DSN(t)
	writer, reader = openDSN(t, dsn), openDSN(t, dsn)
	t.Cleanup(func() {
		writer.Close()
		reader.Close()
	})
	return writer, reader
}

// awaitListening makes signalled reads until changes receives one:
// signals sent before a listener is connected are lost. Each read must
// find the events the log holds.
func awaitListening(ctx context.Context, t *testing.T, s *Store, changes <-chan struct{}, events int) {
	t.Helper()
	for {
		evs, err := s.readSignalled(ctx, 0, 10, 0, 0)
		if err != nil || len(evs) != events {
			t.Fatalf("read with a signal = %d events, %v; want %d", len(evs), err, events)
		}
		select {
		case <-changes:
			// Let the signals still on their way (earlier reads', the
			// notifier's for earlier appends, sent up to notifyWindow
			// after them) arrive.
			for {
				select {
				case <-changes:
				case <-time.After(notifyWindow + 100*time.Millisecond):
					return
				}
			}
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no change signal from another store's read")
		}
	}
}

// holdSignals keeps s's notifier from sending on its own for an hour:
// only a read, or closing, can send what it owes.
func holdSignals(s *Store) {
	s.notifier.mu.Lock()
	defer s.notifier.mu.Unlock()
	s.notifier.pending, s.notifier.since = true, time.Now().Add(time.Hour)
}

func TestNotifierWindow(t *testing.T) {
	n := newNotifier(nil, slog.New(slog.DiscardHandler), "p")
	if send, wait := n.due(); send || wait != 0 {
		t.Fatalf("nothing pending: due = %v, %v", send, wait)
	}
	n.signal()
	if send, wait := n.due(); send || wait <= 0 || wait > notifyWindow {
		t.Fatalf("a signal: due = %v, %v; want a wait for a read to carry it", send, wait)
	}
	if !n.take() {
		t.Fatal("a read cannot carry the pending signal")
	}
	if n.take() {
		t.Fatal("one signal carried twice")
	}
	if send, wait := n.due(); send || wait != 0 {
		t.Fatalf("after a read carried it: due = %v, %v; want nothing", send, wait)
	}
	n.signal()
	n.mu.Lock()
	n.since = n.since.Add(-notifyWindow)
	n.mu.Unlock()
	n.signal() // a later append does not push the signal back
	if send, _ := n.due(); !send {
		t.Fatal("a signal no read carried is not sent after the window")
	}
	if send, wait := n.due(); send || wait != 0 {
		t.Fatalf("after sending: due = %v, %v; want nothing", send, wait)
	}
}
