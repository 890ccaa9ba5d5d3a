package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/omega-gateway/omega/projections/engine"
)

// A follower's wait for the read models hurries the process's reader of
// the log and makes it urgent only where the process applies them: a
// process that merely reads the tables gains nothing by reading the log
// sooner.
func TestAwaitIsUrgentOnlyForAnApplier(t *testing.T) {
	open := backends()[1].Open(t)
	nodes := []*exclusiveNode{startExclusive(t, open)}
	waitOneApplierEach(t, nodes) // the first applies both read models
	nodes = append(nodes, startExclusive(t, open))
	who := map[string]int{"applied": 0}
	for i, n := range nodes {
		woken := 0
		n.engine.OnAwait(func() { woken++ })
		if n.engine.Urgent() {
			t.Fatalf("process %d is urgent before anyone waits", i)
		}
		done := n.engine.Await()
		if want := map[bool]int{true: 1}[i == who["applied"]]; woken != want {
			t.Errorf("process %d: a wait woke the reader %d times, want %d", i, woken, want)
		}
		if got, want := n.engine.Urgent(), i == who["applied"]; got != want {
			t.Errorf("process %d (applier: %v) urgent = %v while a follower waits", i, want, got)
		}
		done()
		if n.engine.Urgent() {
			t.Errorf("process %d still urgent once the wait ended", i)
		}
	}
}

// An exclusive applier commits a lane's batches no more often than its
// pace while nobody here waits for the read models, and at once when a
// wait begins. With the pace an hour, a second append is not applied
// until a follower awaits the read models.
func TestApplierPacesUntilAwaited(t *testing.T) {
	open := backends()[1].Open(t)
	n := startExclusive(t, open, func(e *engine.Engine) { e.ApplyPace = time.Hour })
	waitOneApplierEach(t, []*exclusiveNode{n})
	appendFacts(t, n.store, 1, "pace")
	first := appliedEnd(t, n, 0)
	appendFacts(t, n.store, 1, "pace")
	time.Sleep(300 * time.Millisecond)
	if got, _ := n.engine.AppliedThrough("applied"); got != first {
		t.Fatalf("applied through %d within its pace, want still %d", got, first)
	}
	done := n.engine.Await()
	defer done()
	appliedEnd(t, n, first)
}

// appliedEnd waits until n's engine applied the log's end after position
// after, and returns that position.
func appliedEnd(t *testing.T, n *exclusiveNode, after int64) int64 {
	t.Helper()
	end, err := n.store.ReadAll(context.Background(), after, 100)
	if err != nil || len(end) == 0 {
		t.Fatalf("nothing in the log after %d: %v", after, err)
	}
	want := end[len(end)-1].Position
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if got, _ := n.engine.AppliedThrough("applied"); got == want {
			return want
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read models stayed behind %d", want)
		}
	}
}
