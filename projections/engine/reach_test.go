package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/projections/engine"
)

// Reach returns once the read model shows every event committed before
// the call, on both backends, with the applier running in this engine;
// with none running it ends at its context with the read model named.
func TestReach(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)()
			e := engine.New(s.DB(), s, b.Dialect, registry(), quiet, applied{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := e.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			appendFacts(t, s, 20, "1")
			stalled, stop := context.WithTimeout(ctx, 150*time.Millisecond)
			err := e.Reach(stalled, "applied")
			stop()
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "applied read model") {
				t.Fatalf("Reach with no applier = %v, want the deadline with the read model named", err)
			}

			done := make(chan struct{})
			go func() { defer close(done); _ = e.Run(ctx) }()
			defer func() { cancel(); <-done }()
			for round := range 3 {
				appendFacts(t, s, 15, "2")
				if err := e.Reach(ctx, "applied"); err != nil {
					t.Fatal(err)
				}
				if got, want := count(t, s.DB(), "applied"), totalEvents(t, s); got != want {
					t.Fatalf("round %d: after Reach the read model holds %d events, the log %d", round, got, want)
				}
			}
		})
	}
}

// On PostgreSQL a process that does not apply the read model reaches it
// through the one that does.
func TestReachThroughAnotherApplier(t *testing.T) {
	open := backends()[1].Open(t)
	nodes := []*exclusiveNode{startExclusive(t, open)}
	waitOneApplierEach(t, nodes)
	reader := startExclusive(t, open)
	for round := range 3 {
		appendFacts(t, reader.store, 15, "3")
		if err := reader.engine.Reach(context.Background(), "applied", "applied_too"); err != nil {
			t.Fatal(err)
		}
		if got, want := count(t, reader.store.DB(), "applied"), totalEvents(t, reader.store); got != want {
			t.Fatalf("round %d: after Reach the read model holds %d events, the log %d", round, got, want)
		}
	}
	if len(reader.engine.Holding()) != 0 {
		t.Fatalf("the second process applies %v", reader.engine.Holding())
	}
}
