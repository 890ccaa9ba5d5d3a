package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// A transaction left open anywhere in the database hides the events
// committed after it from the log's readers: a rebuild waits for it to end
// rather than finishing short of the log's end.
func TestRebuildWaitsForOpenTransactions(t *testing.T) {
	s := backends()[1].Open(t)()
	ctx := context.Background()
	appendFacts(t, s, 3, "1")
	holder, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback() }()
	if _, err := holder.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	late := domain.NewEvent{ID: uuid.New(), Type: "FromTheFuture", Data: json.RawMessage(`{}`)}
	if _, err := s.Append(ctx, "sender-telegram-1", eventstore.Any, late); err != nil {
		t.Fatal(err)
	}
	e := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, applied{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Rebuild(ctx, e.Projections(), nil) }()
	select {
	case err := <-done:
		t.Fatalf("the rebuild ended while a transaction hid the log's last event: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The late event's type is unknown: reaching it stops the rebuild.
	if err := <-done; err == nil {
		t.Fatal("the rebuild did not reach the last event")
	}
}
