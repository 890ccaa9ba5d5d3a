package postgres

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// An announcement names its schema: another schema's (the channel is the
// database's) is not ours, and one that cannot be read counts as missed.
func TestParseCheckpointNotice(t *testing.T) {
	tests := []struct {
		payload   string
		ours      bool
		missed    bool
		position  int64
		consumers []string
	}{
		{"omega 42 turns audit", true, false, 42, []string{"turns", "audit"}},
		{"other 42 turns", false, false, 0, nil},
		{"omega x turns", true, true, 0, nil},
		{"omega 42", true, true, 0, nil},
		{"", true, true, 0, nil},
	}
	for _, tc := range tests {
		n, ours := parseCheckpointNotice("omega", tc.payload)
		if ours != tc.ours || n.Missed != tc.missed || n.Position != tc.position || !slices.Equal(n.Consumers, tc.consumers) {
			t.Errorf("%q: %+v ours=%v, want position %d consumers %v missed %v ours %v", tc.payload, n, ours, tc.position, tc.consumers, tc.missed, tc.ours)
		}
	}
}

// A checkpoint announced in a transaction reaches another store's
// watchers when the transaction commits, and never when it rolls back.
func TestCheckpointAnnouncementsReachOtherStores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn := pgtest.DSN(t)
	quiet := Options{Logger: slog.New(slog.DiscardHandler)}
	applier, err := Open(ctx, dsn, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer applier.Close()
	reader, err := Open(ctx, dsn, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	notices := make(chan eventstore.CheckpointNotice, 100)
	reader.WatchCheckpoints(ctx, func(n eventstore.CheckpointNotice) { notices <- n })

	announce := func(pos int64, commit bool) {
		tx, err := applier.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := applier.AnnounceCheckpointsTx(ctx, tx, []string{"turns", "audit"}, pos); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The listener connects in the background: announce until one arrives.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for first := true; first; {
		announce(1, true)
		select {
		case n := <-notices:
			if n.Missed || n.Position != 1 || !slices.Equal(n.Consumers, []string{"turns", "audit"}) {
				t.Fatalf("notice %+v", n)
			}
			first = false
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no announcement reached the other store")
		}
	}
	announce(2, false)
	announce(3, true)
	for {
		select {
		case n := <-notices:
			switch n.Position {
			case 2:
				t.Fatal("a rolled-back announcement arrived")
			case 3:
				return
			}
		case <-ctx.Done():
			t.Fatal("the committed announcement did not arrive")
		}
	}
}
