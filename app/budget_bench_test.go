package app_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/turn"
	budgethandler "github.com/omega-gateway/omega/handlers/budget"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/providers"
)

// BenchmarkBudgetCheck is what the guard adds to one provider call: the
// decision (the ledger's sums in one statement, the log after the
// ledger's checkpoint, the sender's limits) and, with a limit set, taking
// and giving back the call's slot. The log holds 10,000 calls this month
// by 100 senders, the ledger has applied them, and 20 more are on the log
// only (the ledger lags). The sender asking has made no call yet (the
// runaway guard lets it through).
func BenchmarkBudgetCheck(b *testing.B) {
	for _, backend := range benchBackends() {
		vars := map[string]string{"OMEGA_DATA_DIR": b.TempDir(), "HOME": b.TempDir()}
		if backend == "postgres" {
			vars["OMEGA_DATABASE_URL"] = pgtest.DSN(b)
		}
		a := benchBudgetApp(b, vars)
		for _, c := range []struct {
			name string
			cfg  budgethandler.Config
		}{
			{"off", budgethandler.Config{}},
			{"runaway", budgethandler.Config{RunawayCalls: 60, RunawayWindow: 10 * time.Minute}},
			{"limits", budgethandler.Config{Limits: budget.Limits{Daily: budget.Amount{Tokens: 1 << 40}, Monthly: budget.Amount{USD: 1e6}},
				RunawayCalls: 60, RunawayWindow: 10 * time.Minute}},
		} {
			b.Run(backend+"/"+c.name, func(b *testing.B) {
				// Slots are given back at once: the grace after a call is
				// waiting, not work.
				c.cfg.Location, c.cfg.Grace = time.UTC, time.Nanosecond
				g, err := budgethandler.New(c.cfg, a.Store, a.Registry, a.Calls, nil, quiet)
				if err != nil {
					b.Fatal(err)
				}
				// A scheduled action: background work, which the runaway
				// guard counts (a person's own message is not counted).
				call := providers.Call{Purpose: "turn", Sender: "http-new", Background: true}
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					d, err := g.Allow(ctx, call)
					if err != nil || !d.Allowed || d.Paused {
						b.Fatalf("%+v %v", d, err)
					}
					d.Done()
				}
			})
		}
	}
}

func benchBudgetApp(b *testing.B, vars map[string]string) *app.App {
	b.Helper()
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	if err := a.Engine.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	appendCalls := func(n int) {
		evs := make([]domain.NewEvent, 0, n)
		for i := range n {
			e, err := domain.NewEventFrom(turn.ProviderReplied{Provider: "fake", Model: "m", InputTokens: 100, OutputTokens: 20, UsageReported: true},
				domain.Metadata{Channel: "http", Sender: fmt.Sprintf("s%d", i%100)})
			if err != nil {
				b.Fatal(err)
			}
			evs = append(evs, e)
		}
		if _, err := a.Store.Append(ctx, "bench-calls-"+fmt.Sprint(time.Now().UnixNano()), 0, evs...); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	for range benchBatches() {
		appendCalls(1000)
	}
	b.Logf("appended in %s", time.Since(start).Round(time.Millisecond))
	if err := a.Engine.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	appendCalls(20)
	b.Logf("10,020 calls on the log, 10,000 in the ledger, in %s", time.Since(start).Round(time.Millisecond))
	return a
}

// benchBackends are the backends to measure: OMEGA_BENCH_BACKEND picks one.
func benchBackends() []string {
	if b := os.Getenv("OMEGA_BENCH_BACKEND"); b != "" {
		return []string{b}
	}
	return []string{"sqlite", "postgres"}
}

func benchBatches() int {
	if os.Getenv("OMEGA_BENCH_SMALL") != "" {
		return 1
	}
	return 10
}
