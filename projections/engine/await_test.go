package engine_test

import (
	"testing"
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
