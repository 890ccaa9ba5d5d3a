package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	budgethandler "github.com/omega-gateway/omega/handlers/budget"
	"github.com/omega-gateway/omega/providers"
)

// openBudgetApp opens a store with its read-model tables and no runtime:
// nothing applies the read models, so the spend ledger lags the log by
// everything a test appends until it catches up.
func openBudgetApp(t *testing.T, vars map[string]string) *app.App {
	t.Helper()
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), cfg, quiet, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Engine.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

func newGuard(t *testing.T, a *app.App, cfg budgethandler.Config, now func() time.Time) *budgethandler.Guard {
	t.Helper()
	g, err := budgethandler.New(cfg, a.Store, a.Registry, a.Calls, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	g.Now = now
	return g
}

// recordCall appends a turn's reply that used tokens (in and out
// together) for the sender, as the driver records one.
func recordCall(t *testing.T, a *app.App, id string, tokens int) {
	t.Helper()
	e, err := domain.NewEventFrom(turn.ProviderReplied{Provider: "fake", Model: "m", Text: "ok", InputTokens: tokens - tokens/3,
		OutputTokens: tokens / 3, UsageReported: true}, domain.Metadata{Channel: "http", Sender: id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.Append(context.Background(), domain.TurnStream(uuid.NewString()), 0, e); err != nil {
		t.Fatal(err)
	}
}

func allow(t *testing.T, g *budgethandler.Guard, c providers.Call) budgethandler.Decision {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := g.Allow(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	d.Done()
	return d
}

func exceeded(t *testing.T, a *app.App) []budget.BudgetExceeded {
	t.Helper()
	evs, err := a.Store.Load(context.Background(), budget.ExceededStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []budget.BudgetExceeded
	for _, e := range evs {
		p, err := a.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		if x, ok := p.(budget.BudgetExceeded); ok {
			out = append(out, x)
		}
	}
	return out
}

// The guard decides from the log: a call under the limit goes ahead, one
// over it is refused with the reset time and recorded, background work
// stops at 90 %, and a sender's own limit binds only that sender. The
// read model never applied a thing, and once it has the decisions are
// the same.
func TestBudgetGuardDecidesFromTheLog(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			a := openBudgetApp(t, baseVars(t, b, "claude"))
			loc := time.FixedZone("Owner", 3*3600)
			g := newGuard(t, a, budgethandler.Config{Limits: budget.Limits{Daily: budget.Amount{Tokens: 1000}}, Location: loc, Grace: 50 * time.Millisecond}, time.Now)
			ana := providers.Call{Purpose: "turn", Sender: "http-ana"}
			heartbeat := providers.Call{Purpose: "heartbeat", Background: true}

			recordCall(t, a, "ana", 850)
			if d := allow(t, g, ana); !d.Allowed || d.Share < 0.849 || d.Share > 0.851 {
				t.Fatalf("85 %% spent: %+v, want allowed at 0.85", d)
			}
			if d := allow(t, g, heartbeat); !d.Allowed {
				t.Fatalf("85 %% spent, the heartbeat was refused: %+v", d)
			}
			recordCall(t, a, "bo", 60)
			if d := allow(t, g, heartbeat); d.Allowed {
				t.Fatalf("91 %% spent, the heartbeat went ahead: %+v", d)
			}
			if d := allow(t, g, ana); !d.Allowed {
				t.Fatalf("91 %% spent, a person was refused: %+v", d)
			}
			recordCall(t, a, "bo", 90)
			for _, check := range []string{"lagging", "caught up"} {
				d := allow(t, g, ana)
				wantReset := budget.PeriodEnd(budget.Day, time.Now(), loc)
				if d.Allowed || d.Period != budget.Day || !d.ResetAt.Equal(wantReset) || d.Spent.Tokens != 1000 {
					t.Fatalf("%s: all spent: %+v, want refused until %s", check, d, wantReset)
				}
				if err := d.Err("fake"); providers.ClassOf(err) != providers.OverBudget {
					t.Fatalf("%s: refusal error %v", check, err)
				}
				if err := a.Engine.CatchUp(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			got := exceeded(t, a)
			if len(got) != 3 || !got[0].Background || got[1].Sender != "http-ana" || got[2].Spent.Tokens != 1000 {
				t.Fatalf("BudgetExceeded recorded: %+v", got)
			}
		})
	}
}

// A sender's limit set with BudgetSet binds that sender, not others.
func TestBudgetSenderLimit(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			a := openBudgetApp(t, baseVars(t, b, "claude"))
			g := newGuard(t, a, budgethandler.Config{Location: time.UTC}, time.Now)
			e, _ := domain.NewEventFrom(budget.BudgetSet{Channel: "http", SenderID: "ana", Limits: budget.Limits{Monthly: budget.Amount{Tokens: 100}}}, domain.Metadata{})
			if _, err := a.Store.Append(context.Background(), budget.LimitsStream, -1, e); err != nil {
				t.Fatal(err)
			}
			recordCall(t, a, "ana", 120)
			recordCall(t, a, "bo", 5000)
			if d := allow(t, g, providers.Call{Purpose: "turn", Sender: "http-ana"}); d.Allowed || d.Scope != "http-ana" || d.Period != budget.Month {
				t.Fatalf("ana over her monthly limit: %+v", d)
			}
			if d := allow(t, g, providers.Call{Purpose: "turn", Sender: "http-bo"}); !d.Allowed {
				t.Fatalf("bo has no limit: %+v", d)
			}
		})
	}
}

// Limits reset at midnight in the owner's time zone, not UTC's: a day
// spent a minute before the owner's midnight is fresh a minute after.
func TestBudgetResetsAtTheOwnersMidnight(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			a := openBudgetApp(t, baseVars(t, b, "claude"))
			// A zone where it is 23:58 now: its midnight is two minutes away.
			now := time.Now()
			utc := now.UTC()
			offset := (23*3600 + 58*60) - (utc.Hour()*3600 + utc.Minute()*60 + utc.Second())
			loc := time.FixedZone("Owner", offset)
			var shift atomic.Int64
			clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
			g := newGuard(t, a, budgethandler.Config{Limits: budget.Limits{Daily: budget.Amount{Tokens: 100}}, Location: loc}, clock)
			recordCall(t, a, "ana", 100)
			ana := providers.Call{Purpose: "turn", Sender: "http-ana"}
			d := allow(t, g, ana)
			if d.Allowed {
				t.Fatalf("before the owner's midnight: %+v", d)
			}
			if d.ResetAt.In(loc).Hour() != 0 || d.ResetAt.Sub(now) > 3*time.Minute {
				t.Fatalf("resets %s, want the owner's coming midnight", d.ResetAt.In(loc))
			}
			shift.Store(int64(d.ResetAt.Sub(now) + time.Second))
			if d := allow(t, g, ana); !d.Allowed {
				t.Fatalf("after the owner's midnight: %+v", d)
			}
		})
	}
}

// The runaway guard pauses a loop: a sender's scheduled actions once
// that sender made more calls than allowed within the window, and one of
// omega's own loops once it did. A person's own messages are never
// paused by it.
func TestBudgetRunawayGuardPausesTheLoop(t *testing.T) {
	a := openBudgetApp(t, baseVars(t, backends()[0], "claude"))
	g := newGuard(t, a, budgethandler.Config{Location: time.UTC, RunawayCalls: 3, RunawayWindow: time.Hour}, time.Now)
	action := providers.Call{Purpose: "turn", Sender: "http-ana", Background: true}
	for i := range 3 {
		if d := allow(t, g, action); !d.Allowed || d.Paused {
			t.Fatalf("call %d: %+v", i+1, d)
		}
		recordCall(t, a, "ana", 1)
	}
	d := allow(t, g, action)
	if !d.Paused || providers.ClassOf(d.Err("fake")) != providers.OverBudget || d.ResetAt.Before(time.Now()) {
		t.Fatalf("the fourth call in the window: %+v", d)
	}
	if d := allow(t, g, providers.Call{Purpose: "turn", Sender: "http-ana"}); d.Paused {
		t.Fatalf("ana writing herself was paused: %+v", d)
	}
	if d := allow(t, g, providers.Call{Purpose: "turn", Sender: "http-bo", Background: true}); d.Paused {
		t.Fatalf("another sender's action was paused: %+v", d)
	}
	heartbeat := providers.Call{Purpose: "heartbeat", Background: true}
	for range 3 {
		e, _ := domain.NewEventFrom(heartbeatdom.HeartbeatGroupReplied{Group: 1, Usage: &usage.CallUsage{InputTokens: 1}}, domain.Metadata{})
		if _, err := a.Store.Append(context.Background(), "heartbeat-test", -1, e); err != nil {
			t.Fatal(err)
		}
	}
	if d := allow(t, g, heartbeat); !d.Paused {
		t.Fatalf("the heartbeat's fourth call in the window: %+v", d)
	}
	var paused int
	evs, _ := a.Store.Load(context.Background(), budget.ExceededStream, 1)
	for _, e := range evs {
		if e.Type == "LoopPaused" {
			paused++
		}
	}
	if paused != 2 {
		t.Fatalf("%d LoopPaused recorded, want 2", paused)
	}
}

// costly is a provider whose every call costs tokens, recorded as the
// driver records a reply, after the call returns.
type costly struct {
	a      *app.App
	tokens int
	calls  *atomic.Int64
}

func (costly) Name() string { return "costly" }
func (c costly) Complete(ctx context.Context, _ providers.Request) (providers.Response, error) {
	c.calls.Add(1)
	time.Sleep(5 * time.Millisecond) // a call takes time: others decide meanwhile
	call, _ := providers.CallOf(ctx)
	e, err := domain.NewEventFrom(turn.ProviderReplied{Provider: "costly", InputTokens: c.tokens, UsageReported: true},
		domain.Metadata{Channel: "http", Sender: strings.TrimPrefix(call.Sender, "http-")})
	if err != nil {
		return providers.Response{}, err
	}
	_, err = c.a.Store.Append(ctx, domain.TurnStream(uuid.NewString()), 0, e)
	return providers.Response{Text: "ok", InputTokens: c.tokens}, err
}

// Two processes on one PostgreSQL database, each with four workers
// calling as fast as they can, never spend more than the limit plus one
// call's cost: each call holds a slot beside the log until its outcome is
// on it, and the room left bounds the slots.
func TestBudgetTwoProcessesOverspendByAtMostOneCall(t *testing.T) {
	if testing.Short() {
		t.Skip("races two stores on PostgreSQL")
	}
	vars := baseVars(t, backends()[1], "claude")
	const limit, cost = 2000, 100
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		v := map[string]string{}
		for k, x := range vars {
			v[k] = x
		}
		v["OMEGA_DATA_DIR"] = t.TempDir()
		a := openBudgetApp(t, v)
		g := newGuard(t, a, budgethandler.Config{Limits: budget.Limits{Daily: budget.Amount{Tokens: limit}}, Location: time.UTC,
			Grace: 200 * time.Millisecond}, time.Now)
		p := budgethandler.Wrap(costly{a: a, tokens: cost, calls: &calls}, g)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := providers.WithCall(context.Background(), providers.Call{Purpose: "turn", Sender: "http-w" + string(rune('a'+w))})
				for {
					_, err := p.Complete(ctx, providers.Request{})
					if providers.ClassOf(err) == providers.OverBudget {
						return
					}
					if err != nil && !errors.Is(err, context.Canceled) {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	spent := calls.Load() * cost
	if spent < limit || spent > limit+cost {
		t.Fatalf("spent %d tokens in %d calls; want at least the limit %d and at most one call (%d) more", spent, calls.Load(), limit, cost)
	}
	t.Logf("spent %d of %d tokens in %d calls", spent, limit, calls.Load())
}
