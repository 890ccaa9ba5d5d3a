package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// stalled is a read model in a lane of its own whose database times out
// until released: while it does, the other lane must go on.
type stalled struct{ release <-chan struct{} }

func (stalled) Name() string     { return "stalled" }
func (stalled) Lane() string     { return "slow" }
func (stalled) Tables() []string { return []string{"stalled"} }
func (stalled) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY)", t("stalled"))}
}

func (p stalled) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	select {
	case <-p.release:
	default:
		return fmt.Errorf("stalled lane: %w", context.DeadlineExceeded)
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position) VALUES ($1)", tx.T("stalled")), e.Position)
	return err
}

func TestLanes(t *testing.T) {
	main, slow := applied{}, stalled{}
	for _, tc := range []struct {
		name    string
		dialect readmodel.Dialect
		in      []readmodel.Projection
		want    [][]string
	}{
		{"postgres splits by lane", readmodel.Postgres, []readmodel.Projection{main, slow, appliedToo{}}, [][]string{{"applied", "applied_too"}, {"stalled"}}},
		{"a laned one first", readmodel.Postgres, []readmodel.Projection{slow, main}, [][]string{{"stalled"}, {"applied"}}},
		{"sqlite has one writer", readmodel.SQLite, []readmodel.Projection{main, slow}, [][]string{{"applied", "stalled"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]string
			for _, lane := range readmodel.Lanes(tc.dialect, tc.in) {
				var names []string
				for _, p := range lane {
					names = append(names, p.Name())
				}
				got = append(got, names)
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("lanes = %v, want %v", got, tc.want)
			}
		})
	}
}

// A read model in its own lane is applied in transactions of its own: one
// whose writes fail holds back nobody else, with or without exclusive
// appliers, and catches up once they succeed.
func TestLaneStallsAlone(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprintf("exclusive=%v", exclusive), func(t *testing.T) {
			s := backends()[1].Open(t)()
			release := make(chan struct{})
			e := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, applied{}, stalled{release: release})
			if exclusive {
				if err := e.ApplyExclusively(testApplierTTL); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if err := e.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); _ = e.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			appendFacts(t, s, 25, "lanes")
			waitApplied(t, s, "applied")
			if n := count(t, s.DB(), "stalled"); n != 0 {
				t.Fatalf("the stalled lane applied %d events while blocked", n)
			}
			close(release)
			waitApplied(t, s, "stalled")
			if exclusive {
				deadline := time.Now().Add(5 * time.Second)
				for len(e.Holding()) != 2 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if got := e.Holding(); len(got) != 2 {
					t.Fatalf("holding %v, want both read models", got)
				}
			}
		})
	}
}
