package engine_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
)

func fullRegistry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func appendTurn(t *testing.T, s eventstore.Store, m turn.MessageReceived, complete bool) (string, int64) {
	t.Helper()
	id := uuid.NewString()
	ps := []domain.Payload{m}
	if complete {
		ps = append(ps, turn.TurnCompleted{Status: "replied"})
	}
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id}, ps...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(context.Background(), domain.TurnStream(id), eventstore.NoStream, evs...)
	if err != nil {
		t.Fatal(err)
	}
	return id, res.Positions[len(res.Positions)-1]
}

// Events shaped like those that stopped every read model on PostgreSQL
// (appended before intake validation existed) are stored, and the turns
// after them are projected; a rebuild gives the same read models.
func TestOldPoisonShapesDoNotStopProjections(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := b.Open(t)()
			reg := fullRegistry()
			eng := engine.New(s.DB(), s, b.Dialect, reg, quiet,
				facts.ReadModel{}, projections.Turns{}, projections.Sessions{}, tasks.ReadModel{})
			if err := eng.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			longID := strings.Repeat("9", 3000)
			shapes := []turn.MessageReceived{
				{Channel: "http", SenderID: longID, ChatID: longID, Text: "long sender"},
				{Channel: "http", SenderID: "nul\x00sender", ChatID: "c", Text: "nul in sender id"},
				{Channel: "http", SenderID: "bob", SenderName: "B\x00b", ChatID: "c", Text: "nul in name"},
				{Channel: "http", SenderID: "carol", ChatID: "c", Text: "nul\x00in text"},
				{Channel: "http", SenderID: "dave", ChatID: "c", Text: strings.Repeat("x", 200_000)},
			}
			for _, m := range shapes {
				_, _ = appendTurn(t, s, m, false)
			}
			after, last := appendTurn(t, s, turn.MessageReceived{Channel: "http", SenderID: "erin", ChatID: "erin", Text: "hello"}, true)
			runUntil(t, eng, "projections at position "+fmt.Sprint(last), func() bool { return allAt(t, eng, last) })

			if n := count(t, s.DB(), "turns"); n != len(shapes)+1 {
				t.Fatalf("turns rows = %d, want %d", n, len(shapes)+1)
			}
			var status string
			if err := s.DB().QueryRow("SELECT status FROM turns WHERE turn_id = $1", after).Scan(&status); err != nil || status != "replied" {
				t.Fatalf("later turn: status %q, err %v", status, err)
			}
			var open int
			if err := s.DB().QueryRow("SELECT count(*) FROM turns WHERE status = 'open'").Scan(&open); err != nil || open != len(shapes) {
				t.Fatalf("open turns = %d (err %v), want %d: recovery reads them from here", open, err, len(shapes))
			}
			var text string
			if err := s.DB().QueryRow("SELECT input FROM turns WHERE sender = $1", "http-carol").Scan(&text); err != nil || text != "nul\uFFFDin text" {
				t.Fatalf("NUL text stored as %q, err %v", text, err)
			}
			poisoned, err := eng.Poisoned(ctx)
			if err != nil || len(poisoned) != 0 {
				t.Fatalf("poisoned = %+v, err %v: these shapes must be storable", poisoned, err)
			}
			assertVerifies(t, eng)
		})
	}
}

// runUntil runs the engine until cond holds. (The log's head is not read
// from the store: on PostgreSQL a reader may not see the latest events
// while another transaction in the cluster is open.)
func runUntil(t *testing.T, eng *engine.Engine, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			sts, _ := eng.Statuses(context.Background())
			t.Fatalf("timed out waiting for %s: %+v", what, sts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func allAt(t *testing.T, eng *engine.Engine, pos int64) bool {
	sts, err := eng.Statuses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.Position < pos {
			return false
		}
	}
	return true
}

func assertVerifies(t *testing.T, eng *engine.Engine) {
	t.Helper()
	diffs, err := eng.Verify(context.Background(), eng.Projections(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("verify: %s", d)
	}
}

// picky refuses, through a database constraint, to store the value
// "poison": a deterministic failure of one event, the database answering.
type picky struct{}

func (picky) Name() string     { return "picky" }
func (picky) Tables() []string { return []string{"picky"} }
func (picky) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY, value TEXT NOT NULL CHECK (value <> 'poison'))", t("picky"))}
}
func (picky) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	if e.Type != "FactRecorded" {
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position, value) VALUES ($1, $2)", tx.T("picky")), e.Position, p.(sender.FactRecorded).Value)
	return err
}

// A projection that cannot apply one event skips it after a few attempts,
// records the skip once, keeps the event's effect in the projections that
// could apply it, and goes on; verify and rebuild agree with the live
// model and add no second record.
func TestEngineSkipsAndRecordsAPoisonedEvent(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := b.Open(t)()
			eng := engine.New(s.DB(), s, b.Dialect, fullRegistry(), quiet, picky{}, applied{})
			if err := eng.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			var bad int64
			for i, v := range []string{"a", "b", "poison", "c", "d"} {
				evs, err := domain.NewEvents(domain.Metadata{}, sender.FactRecorded{Key: "k", Value: v})
				if err != nil {
					t.Fatal(err)
				}
				pos, err := s.Append(ctx, sender.SenderStream("telegram", "1"), eventstore.Any, evs...)
				if err != nil {
					t.Fatal(err)
				}
				if i == 2 {
					bad = pos.Positions[0]
				}
			}
			// The skip is recorded just after it commits; applied applies
			// the record too.
			runUntil(t, eng, "the skip and its record", func() bool {
				p, err := eng.Poisoned(ctx)
				return err == nil && len(p) == 1 && count(t, s.DB(), "applied") == 6
			})
			if n := count(t, s.DB(), "picky"); n != 4 {
				t.Fatalf("picky rows = %d, want 4", n)
			}
			// applied saw the poisoned event (and the record of it) too.
			if n := count(t, s.DB(), "applied"); n != 6 {
				t.Fatalf("applied rows = %d, want 6", n)
			}
			checkPoisoned(t, eng, bad)
			assertVerifies(t, eng)
			if err := eng.Rebuild(ctx, eng.Projections(), nil); err != nil {
				t.Fatal(err)
			}
			if n := count(t, s.DB(), "picky"); n != 4 {
				t.Fatalf("after rebuild picky rows = %d, want 4", n)
			}
			checkPoisoned(t, eng, bad)
		})
	}
}

func checkPoisoned(t *testing.T, eng *engine.Engine, pos int64) {
	t.Helper()
	got, err := eng.Poisoned(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Projection != "picky" || got[0].Position != pos || got[0].Type != "FactRecorded" || got[0].Error == "" {
		t.Fatalf("poisoned = %+v, want one record for picky at %d", got, pos)
	}
}

// flaky fails like a lost connection for its first failures calls: an
// outage, however long, is waited out and never skipped.
type flaky struct {
	failures *int
}

func (flaky) Name() string     { return "flaky" }
func (flaky) Tables() []string { return []string{"flaky"} }
func (flaky) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY)", t("flaky"))}
}
func (f flaky) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	if *f.failures > 0 {
		*f.failures--
		return fmt.Errorf("apply: %w", driver.ErrBadConn)
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position) VALUES ($1)", tx.T("flaky")), e.Position)
	return err
}

func TestEngineNeverSkipsDuringAnOutage(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := b.Open(t)()
			failures := 10 // well past the attempts a bad event gets
			eng := engine.New(s.DB(), s, b.Dialect, fullRegistry(), quiet, flaky{&failures})
			if err := eng.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			appendFacts(t, s, 3, "1")
			for failures > 0 {
				if err := eng.CatchUp(ctx); err == nil {
					t.Fatalf("caught up during an outage (failures left %d, rows %d)", failures, count(t, s.DB(), "flaky"))
				}
			}
			if err := eng.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			if n, want := count(t, s.DB(), "flaky"), totalEvents(t, s); n != want {
				t.Fatalf("flaky rows = %d, want %d", n, want)
			}
			if p, err := eng.Poisoned(ctx); err != nil || len(p) != 0 {
				t.Fatalf("poisoned during an outage: %+v %v", p, err)
			}
		})
	}
}
