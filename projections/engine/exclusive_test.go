package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// appliedToo is applied{} under another name and table: a second read
// model, with its own applier.
type appliedToo struct{}

func (appliedToo) Name() string     { return "applied_too" }
func (appliedToo) Tables() []string { return []string{"applied_too"} }
func (appliedToo) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY, type TEXT NOT NULL)", t("applied_too"))}
}

func (appliedToo) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position, type) VALUES ($1, $2)", tx.T("applied_too")), e.Position, e.Type)
	return err
}

// exclusiveNode is one process's engine applying exclusively.
type exclusiveNode struct {
	store  store
	engine *engine.Engine
	stop   context.CancelFunc
	done   chan struct{}
}

const testApplierTTL = time.Second

func startExclusive(t *testing.T, open func() store) *exclusiveNode {
	t.Helper()
	s := open()
	e := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, applied{}, appliedToo{})
	e.BatchSize = 7
	if err := e.ApplyExclusively(testApplierTTL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	n := &exclusiveNode{store: s, engine: e, stop: cancel, done: make(chan struct{})}
	go func() { defer close(n.done); _ = e.Run(ctx) }()
	t.Cleanup(func() { n.stop(); <-n.done })
	return n
}

// appliers returns, per projection, the nodes that say they apply it.
func appliers(nodes []*exclusiveNode) map[string][]int {
	out := map[string][]int{}
	for i, n := range nodes {
		for _, name := range n.engine.Holding() {
			out[name] = append(out[name], i)
		}
	}
	return out
}

// waitOneApplierEach waits until each projection has exactly one applier
// among the running nodes and returns who.
func waitOneApplierEach(t *testing.T, nodes []*exclusiveNode) map[string]int {
	t.Helper()
	deadline := time.Now().Add(testApplierTTL + 2*time.Second)
	for {
		got := appliers(nodes)
		if len(got["applied"]) == 1 && len(got["applied_too"]) == 1 {
			return map[string]int{"applied": got["applied"][0], "applied_too": got["applied_too"][0]}
		}
		if time.Now().After(deadline) {
			t.Fatalf("appliers = %v, want one for each projection", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ourLocks selects the granted projection locks of this test's schema
// (tests of other packages run beside it on the same database).
const ourLocks = `locktype = 'advisory' AND granted AND classid = 28525
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND objid::bigint IN (SELECT hashtext(current_schema() || '/' || n)::bigint & 4294967295 FROM unnest(ARRAY['applied', 'applied_too']) AS n)`

// lockHolders counts the sessions holding projection advisory locks.
func lockHolders(t *testing.T, s store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM pg_locks WHERE ` + ourLocks).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Three processes' engines share two read models: each is applied by one
// of them, every event exactly once (the tables' keys), the others learn
// its progress from its announcements; stopping an applier hands its read
// models to another within the TTL, which goes on from the checkpoint.
func TestExclusiveAppliersHandOver(t *testing.T) {
	open := backends()[1].Open(t)
	var nodes []*exclusiveNode
	for range 3 {
		nodes = append(nodes, startExclusive(t, open))
	}
	who := waitOneApplierEach(t, nodes)
	if n := lockHolders(t, nodes[0].store); n != 2 {
		t.Fatalf("%d projection locks held, want 2", n)
	}

	var writers sync.WaitGroup
	for w := range 3 {
		writers.Add(1)
		go func() { defer writers.Done(); appendFacts(t, nodes[w].store, 30, fmt.Sprint(w)) }()
	}
	writers.Wait()
	waitApplied(t, nodes[0].store, "applied")
	waitApplied(t, nodes[0].store, "applied_too")
	waitThroughEverywhere(t, nodes, "applied")

	// The applier of "applied" stops; another takes it over.
	gone := who["applied"]
	nodes[gone].stop()
	<-nodes[gone].done
	left := slices.Delete(slices.Clone(nodes), gone, gone+1)
	stopped := time.Now()
	next := waitOneApplierEach(t, left)
	if took := time.Since(stopped); took > testApplierTTL {
		t.Fatalf("hand-over took %s, want under %s", took, testApplierTTL)
	}
	appendFacts(t, left[0].store, 20, "after")
	waitApplied(t, left[0].store, "applied")
	waitApplied(t, left[0].store, "applied_too")
	if n := lockHolders(t, left[0].store); n != 2 {
		t.Fatalf("%d projection locks held after the hand-over, want 2", n)
	}
	_ = next
}

// waitThroughEverywhere waits until every node knows the projection's
// checkpoint is at the log's end: the applier from its commits, the others
// from its announcements.
func waitThroughEverywhere(t *testing.T, nodes []*exclusiveNode, name string) {
	t.Helper()
	end, err := nodes[0].engine.Statuses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, st := range end {
		if st.Name == name {
			want = st.Position
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, n := range nodes {
		for {
			got, ok := n.engine.AppliedThrough(name)
			if ok && got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d knows %s applied through %d (%v), want %d", i, name, got, ok, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A session the server ends (an applier cut off, or idle past its timeout)
// loses its read models; the engine opens another and some engine applies
// them again. Events are still applied exactly once.
func TestExclusiveApplierSessionKilled(t *testing.T) {
	open := backends()[1].Open(t)
	nodes := []*exclusiveNode{startExclusive(t, open), startExclusive(t, open)}
	waitOneApplierEach(t, nodes)
	appendFacts(t, nodes[0].store, 20, "1")
	waitApplied(t, nodes[0].store, "applied")
	if _, err := nodes[0].store.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE ` + ourLocks); err != nil {
		t.Fatal(err)
	}
	appendFacts(t, nodes[1].store, 20, "2")
	waitApplied(t, nodes[0].store, "applied")
	waitApplied(t, nodes[0].store, "applied_too")
	waitOneApplierEach(t, nodes)
}

// A tool's CatchUp beside a running applier returns once the read models
// reach the end of the log as it was at the call; with no applier running
// it applies them itself, under their locks.
func TestExclusiveCatchUp(t *testing.T) {
	open := backends()[1].Open(t)
	tool := func() *engine.Engine {
		s := open()
		e := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, applied{}, appliedToo{})
		if err := e.ApplyExclusively(testApplierTTL); err != nil {
			t.Fatal(err)
		}
		return e
	}
	node := startExclusive(t, open)
	waitOneApplierEach(t, []*exclusiveNode{node})
	appendFacts(t, node.store, 40, "1")
	if err := tool().CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := totalEvents(t, node.store)
	if got := count(t, node.store.DB(), "applied"); got != total {
		t.Fatalf("after CatchUp beside the applier: %d applied, want %d", got, total)
	}

	node.stop()
	<-node.done
	appendFacts(t, node.store, 15, "2")
	if err := tool().CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	total = totalEvents(t, node.store)
	for _, table := range []string{"applied", "applied_too"} {
		if got := count(t, node.store.DB(), table); got != total {
			t.Fatalf("after CatchUp with no applier: %s has %d, want %d", table, got, total)
		}
	}
	// A closed session's backend ends, and drops its locks, a moment
	// after the client hung up.
	for deadline := time.Now().Add(5 * time.Second); lockHolders(t, node.store) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d projection locks still held after CatchUp", lockHolders(t, node.store))
		}
	}
}
