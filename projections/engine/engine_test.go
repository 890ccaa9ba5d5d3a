package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
)

type (
	store   = projectionstest.Store
	backend = projectionstest.Backend
)

var (
	quiet    = projectionstest.Quiet
	backends = projectionstest.Backends
)

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

// applied records every position it sees under a primary key, so applying
// any event twice fails the test with a constraint violation.
type applied struct{}

func (applied) Name() string     { return "applied" }
func (applied) Tables() []string { return []string{"applied"} }
func (applied) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY, type TEXT NOT NULL)", t("applied"))}
}
func (applied) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position, type) VALUES ($1, $2)", tx.T("applied")), e.Position, e.Type)
	return err
}

func appendFacts(t *testing.T, s eventstore.Store, n int, snd string) {
	t.Helper()
	var last int64
	for i := 0; i < n; i++ {
		ps := []domain.Payload{sender.FactRecorded{Key: fmt.Sprintf("k%d", i%7), Value: fmt.Sprintf("v%d", i)}}
		if i%10 == 9 {
			ps = append(ps, sender.FactRemoved{Key: "k3"}, sender.LanguageSwitched{To: "Spanish"})
		}
		if i%25 == 24 {
			ps = append(ps, sender.FactsPurged{Count: 7})
		}
		evs, err := domain.NewEvents(domain.Metadata{}, ps...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Append(context.Background(), sender.SenderStream("telegram", snd), eventstore.Any, evs...)
		if err != nil {
			t.Fatal(err)
		}
		last = res.Positions[len(res.Positions)-1]
	}
	waitVisible(t, s, last)
}

// waitVisible waits until the event at position pos can be read: on
// PostgreSQL the log shows an event only once every older transaction in
// the cluster has ended, and other packages' tests share the cluster.
func waitVisible(t *testing.T, s eventstore.Store, pos int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var after int64
		for {
			evs, err := s.ReadAll(context.Background(), after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				break
			}
			after = evs[len(evs)-1].Position
		}
		if after >= pos {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log shows events up to %d, want %d", after, pos)
		}
	}
}

func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func totalEvents(t *testing.T, s eventstore.Store) int {
	t.Helper()
	var n int
	var after int64
	for {
		evs, err := s.ReadAll(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n += len(evs)
		if len(evs) < 1000 {
			return n
		}
		after = evs[len(evs)-1].Position
	}
}

// waitApplied waits until the table holds one row per event in the log.
// The total is re-read each time: on PostgreSQL a projection's own short
// transaction can briefly hold back which events are readable.
func waitApplied(t *testing.T, s store, table string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, want := count(t, s.DB(), table), totalEvents(t, s)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d rows, want %d", table, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEngine(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Run("LiveRunThenVerify", func(t *testing.T) { testLiveRunThenVerify(t, b) })
			t.Run("TwoEnginesApplyOnce", func(t *testing.T) { testTwoEngines(t, b) })
			t.Run("ResumeAfterStop", func(t *testing.T) { testResume(t, b) })
			t.Run("BadEventsStopReplay", func(t *testing.T) { testBadEvents(t, b) })
		})
	}
}

func testLiveRunThenVerify(t *testing.T, b backend) {
	s := b.Open(t)()
	eng := engine.New(s.DB(), s, b.Dialect, registry(), quiet, facts.ReadModel{}, applied{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	go eng.Run(ctx)
	appendFacts(t, s, 60, "1")
	appendFacts(t, s, 30, "2")
	waitApplied(t, s, "applied")
	// Each projection follows the log on its own; bring the facts one up
	// to date too (safe beside the running engine: checkpoints are locked).
	if err := eng.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}

	var lang string
	if err := s.DB().QueryRow("SELECT language FROM senders WHERE sender = 'telegram-1'").Scan(&lang); err != nil || lang != "Spanish" {
		t.Fatalf("language = %q, %v", lang, err)
	}
	ps, _ := eng.Select("facts")
	diffs, err := eng.Verify(ctx, ps, nil)
	if err != nil || len(diffs) != 0 {
		t.Fatalf("verify after live run: %v %v", diffs, err)
	}
	cancel()

	if _, err := s.DB().Exec("UPDATE facts SET value = 'tampered' WHERE sender = 'telegram-2' AND key = 'k1'"); err != nil {
		t.Fatal(err)
	}
	diffs, err = eng.Verify(context.Background(), ps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || !strings.Contains(diffs[0].String(), "tampered") || len(diffs[0].OnlyLive) != 1 || len(diffs[0].OnlyRebuilt) != 1 {
		t.Fatalf("diffs after tampering = %v", diffs)
	}
	if err := eng.Rebuild(context.Background(), ps, nil); err != nil {
		t.Fatal(err)
	}
	if diffs, err := eng.Verify(context.Background(), ps, nil); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after rebuild: %v %v", diffs, err)
	}
}

// Two engines on one database stand for two omega processes: every event
// must still be applied exactly once (the applied table's key enforces it).
func testTwoEngines(t *testing.T, b backend) {
	open := b.Open(t)
	s1, s2 := open(), open()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var engines []*engine.Engine
	for _, s := range []store{s1, s2} {
		e := engine.New(s.DB(), s, b.Dialect, registry(), quiet, applied{})
		e.BatchSize = 7
		if err := e.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	var wg sync.WaitGroup
	for _, e := range engines {
		wg.Add(1)
		go func() { defer wg.Done(); e.Run(ctx) }()
	}
	var writers sync.WaitGroup
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func() { defer writers.Done(); appendFacts(t, s1, 40, fmt.Sprint(w)) }()
	}
	writers.Wait()
	waitApplied(t, s1, "applied")
	time.Sleep(100 * time.Millisecond)
	if got, want := count(t, s1.DB(), "applied"), totalEvents(t, s1); got != want {
		t.Fatalf("applied %d, want %d", got, want)
	}
	cancel()
	wg.Wait()
}

func testResume(t *testing.T, b backend) {
	s := b.Open(t)()
	eng := engine.New(s.DB(), s, b.Dialect, registry(), quiet, applied{})
	ctx, cancel := context.WithCancel(context.Background())
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { eng.Run(ctx); close(done) }()
	appendFacts(t, s, 20, "1")
	waitApplied(t, s, "applied")
	cancel()
	<-done
	appendFacts(t, s, 20, "1") // written while "down"
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go eng.Run(ctx2)
	waitApplied(t, s, "applied")
	st, err := eng.Statuses(ctx2)
	if err != nil || st[0].Position == 0 {
		t.Fatalf("statuses = %v, %v", st, err)
	}
}

func testBadEvents(t *testing.T, b backend) {
	s := b.Open(t)()
	appendFacts(t, s, 3, "1")
	ctx := context.Background()
	unknown := domain.NewEvent{ID: uuid.New(), Type: "FromTheFuture", Data: json.RawMessage(`{}`)}
	res, err := s.Append(ctx, "sender-telegram-1", eventstore.Any, unknown)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(s.DB(), s, b.Dialect, registry(), quiet, facts.ReadModel{})
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	ps, _ := eng.Select()
	err = eng.Rebuild(ctx, ps, nil)
	if !errors.Is(err, domain.ErrUnknownEventType) || !strings.Contains(err.Error(), fmt.Sprintf("position %d", res.Positions[0])) || !strings.Contains(err.Error(), "FromTheFuture") {
		t.Fatalf("rebuild over an unknown type: %v", err)
	}
	eng.SkipBad = true
	if err := eng.Rebuild(ctx, ps, nil); err != nil {
		t.Fatalf("rebuild with SkipBad: %v", err)
	}

	s2 := b.Open(t)()
	appendFacts(t, s2, 3, "1")
	bad := domain.NewEvent{ID: uuid.New(), Type: "FactRecorded", Data: json.RawMessage(`{"key": 5}`)}
	res, err = s2.Append(ctx, "sender-telegram-1", eventstore.Any, bad)
	if err != nil {
		t.Fatal(err)
	}
	// A payload of a known type that cannot be decoded is the event's own
	// fault: the projection records it as poisoned and goes on.
	eng2 := engine.New(s2.DB(), s2, b.Dialect, fullRegistry(), quiet, facts.ReadModel{})
	if err := eng2.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := eng2.Rebuild(ctx, ps, nil); err != nil {
		t.Fatalf("rebuild over an undecodable payload: %v", err)
	}
	poisoned, err := eng2.Poisoned(ctx)
	if err != nil || len(poisoned) != 1 || poisoned[0].Position != res.Positions[0] || !strings.Contains(poisoned[0].Error, "key") {
		t.Fatalf("poisoned = %+v, err %v; want the undecodable event at %d", poisoned, err, res.Positions[0])
	}
}

type versioned struct {
	applied
	v int
}

func (p versioned) Version() int { return p.v }

// A projection whose schema version changes is dropped and refilled from
// the log at Setup.
func TestSchemaVersionChangeRebuilds(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			s := b.Open(t)()
			ctx := context.Background()
			appendFacts(t, s, 10, "1")
			run := func(p readmodel.Projection) {
				eng := engine.New(s.DB(), s, b.Dialect, registry(), quiet, p)
				if err := eng.Setup(ctx); err != nil {
					t.Fatal(err)
				}
				if err := eng.CatchUp(ctx); err != nil {
					t.Fatal(err)
				}
			}
			run(versioned{v: 1})
			// A row the log does not explain: it survives a Setup at the same
			// version and disappears when the version changes.
			if _, err := s.DB().Exec("INSERT INTO applied (position, type) VALUES (999999, 'stray')"); err != nil {
				t.Fatal(err)
			}
			run(versioned{v: 1})
			if got := count(t, s.DB(), "applied"); got != totalEvents(t, s)+1 {
				t.Fatalf("same version: %d rows", got)
			}
			run(versioned{v: 2})
			if got := count(t, s.DB(), "applied"); got != totalEvents(t, s) {
				t.Fatalf("after a version change: %d rows, want %d", got, totalEvents(t, s))
			}
		})
	}
}
