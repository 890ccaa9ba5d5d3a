package auditlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/projectionstest"
)

// seedAudit records every kind of turn, twice (the second round after
// mid), and catches the turns projection up.
func seedAudit(t *testing.T, b projectionstest.Backend) (*auditlog.Queries, []audittest.Turn, time.Time) {
	t.Helper()
	s := b.Open(t)()
	var turns []audittest.Turn
	var mid time.Time
	for round := range 2 {
		if round == 1 {
			time.Sleep(2 * time.Millisecond) // recorded_at of round 2 is after mid
			mid = time.Now()
			time.Sleep(2 * time.Millisecond)
		}
		for _, turn := range audittest.Turns() {
			audittest.Append(t, s, turn)
			turns = append(turns, turn)
		}
	}
	audittest.Project(t, s, b.Dialect, projectionstest.TurnsRegistry(), projections.Turns{})
	a, err := auditlog.New(s.DB())
	if err != nil {
		t.Fatal(err)
	}
	return a, turns, mid
}

func TestAuditQuery(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			a, turns, mid := seedAudit(t, b)
			ctx := context.Background()
			tests := []struct {
				name string
				f    auditlog.Filter
				want int
			}{
				{"all", auditlog.Filter{}, 14},
				{"sender", auditlog.Filter{Sender: sender.SenderKey("telegram", "ana")}, 6},
				{"channel", auditlog.Filter{Channel: "http"}, 4},
				{"answered", auditlog.Filter{Status: "answered"}, 8},
				{"denied", auditlog.Filter{Status: "denied"}, 2},
				{"failed", auditlog.Filter{Status: "failed"}, 2},
				{"suppressed", auditlog.Filter{Status: "suppressed"}, 2},
				{"acknowledged", auditlog.Filter{Status: "acknowledged"}, 2},
				{"model", auditlog.Filter{Model: "opus"}, 2},
				{"project", auditlog.Filter{Project: "garden"}, 6},
				{"grep input, any case", auditlog.Filter{Grep: "PLAN THE"}, 2},
				{"grep output", auditlog.Filter{Grep: "all good"}, 2},
				{"grep is literal", auditlog.Filter{Grep: "%"}, 0},
				{"since", auditlog.Filter{Since: mid}, 7},
				{"until", auditlog.Filter{Until: mid}, 7},
				{"combined", auditlog.Filter{Since: mid, Channel: "telegram", Status: "answered"}, 3},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					page, err := a.Query(ctx, tt.f)
					if err != nil {
						t.Fatal(err)
					}
					if len(page.Rows) != tt.want || page.Next != "" {
						t.Fatalf("%d rows (next %q), want %d", len(page.Rows), page.Next, tt.want)
					}
				})
			}

			// Keyset pagination visits every row once, newest first.
			seen := map[string]bool{}
			var last time.Time
			f := auditlog.Filter{Limit: 3}
			for pages := 0; ; pages++ {
				page, err := a.Query(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range page.Rows {
					if seen[r.TurnID] || (!last.IsZero() && r.At.After(last)) {
						t.Fatalf("row %s repeated or out of order", r.TurnID)
					}
					seen[r.TurnID], last = true, r.At
				}
				if page.Next == "" {
					if pages != 4 {
						t.Errorf("%d pages, want 5", pages+1)
					}
					break
				}
				f.After = page.Next
			}
			if len(seen) != len(turns) {
				t.Fatalf("paged %d rows, want %d", len(seen), len(turns))
			}

			for _, bad := range []auditlog.Filter{{Status: "happy"}, {After: "nonsense"}, {Limit: 5000}} {
				if _, err := a.Query(ctx, bad); !errors.Is(err, auditlog.ErrBadFilter) {
					t.Errorf("%+v: err %v, want a bad filter", bad, err)
				}
			}
		})
	}
}

func TestAuditUsage(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			a, turns, _ := seedAudit(t, b)
			ctx := context.Background()
			row := func(i int) auditlog.Row {
				r, ok, err := a.Turn(ctx, turns[i].ID)
				if err != nil || !ok {
					t.Fatalf("turn %d: %v %v", i, ok, err)
				}
				return r
			}
			direct := row(0)
			if direct.InputTokens == nil || *direct.InputTokens != 120 || *direct.OutputTokens != 30 || *direct.CacheReadTokens != 20 ||
				direct.CostUSD == nil || *direct.CostUSD != 0.01 || direct.ProviderMs != 1200 || direct.PromptBytes != 400 || direct.Calls != 1 {
				t.Errorf("direct turn usage %+v", direct)
			}
			plan := row(1)
			if plan.InputTokens == nil || *plan.InputTokens != 60 || *plan.OutputTokens != 18 || *plan.CostUSD != 0.05 || plan.ProviderMs != 600 || plan.Calls != 3 || plan.Model != "opus" {
				t.Errorf("plan turn usage %+v", plan)
			}
			// A provider that reported nothing leaves the tokens unknown.
			if s := row(5); s.InputTokens != nil || s.CostUSD != nil || s.Calls != 1 || s.ProviderMs != 10 {
				t.Errorf("unreported usage shown as measured: %+v", s)
			}
			if f := row(4); f.ProviderMs != 50 || f.InputTokens != nil || f.Status != "failed" || f.Outcome != "error" {
				t.Errorf("failed turn %+v", f)
			}

			stats, err := a.Stats(ctx, auditlog.Filter{}, auditlog.ByNone)
			if err != nil || len(stats) != 1 {
				t.Fatal(stats, err)
			}
			s := stats[0]
			if s.Turns != 14 || s.Answered != 8 || s.Denied != 2 || s.Failed != 2 || s.Suppressed != 2 || s.Acknowledged != 2 ||
				s.Reported != 4 || s.InputTokens != 360 || s.OutputTokens != 96 || s.ProviderMs != 2*(1200+600+50+10+10) {
				t.Errorf("stats %+v", s)
			}
			byModel, err := a.Stats(ctx, auditlog.Filter{}, auditlog.ByModel)
			if err != nil {
				t.Fatal(err)
			}
			var models []string
			for _, g := range byModel {
				models = append(models, g.Group)
			}
			if len(models) != 4 || models[0] != "" || models[1] != "haiku" || models[2] != "opus" || models[3] != "sonnet" {
				t.Errorf("groups by model %q", models)
			}
			if _, err := a.Stats(ctx, auditlog.Filter{}, "week"); !errors.Is(err, auditlog.ErrBadFilter) {
				t.Errorf("--by week: %v", err)
			}
		})
	}
}
