package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
)

// The store `serve` hands to every follower is the timed one: it must
// still offer the backend's shared reader and stream cache, or each
// follower reads the log on its own and nothing is served from memory.
func TestTimedStoreKeepsTheSharedReaderAndCache(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var timed app.Store = timedStore{Store: s}
	shared, ok := timed.(interface{ Tail() *eventstore.Tail })
	if !ok || shared.Tail() == nil || shared.Tail() != s.Tail() {
		t.Fatal("the timed store hides the shared reader")
	}
	if _, ok := timed.(eventstore.CachedLoader); !ok {
		t.Fatal("the timed store hides the stream cache")
	}
}
