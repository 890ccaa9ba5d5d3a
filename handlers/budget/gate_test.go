package budget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/providers"
)

type fakeAllower struct {
	d    Decision
	err  error
	seen []providers.Call
}

func (f *fakeAllower) Allow(_ context.Context, c providers.Call) (Decision, error) {
	f.seen = append(f.seen, c)
	return f.d, f.err
}

type countingProvider struct{ calls int }

func (p *countingProvider) Name() string { return "fake" }
func (p *countingProvider) Complete(context.Context, providers.Request) (providers.Response, error) {
	p.calls++
	return providers.Response{Text: "ok"}, nil
}

// The gate asks the guard with the context's tag, makes the call only
// when allowed, and turns a refusal or a guard that cannot decide into
// the provider errors callers already handle.
func TestWrap(t *testing.T) {
	reset := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		a     fakeAllower
		calls int
		class providers.Class
	}{
		{"allowed", fakeAllower{d: Decision{Verdict: budget.Verdict{Allowed: true}}}, 1, providers.Unknown},
		{"over a limit", fakeAllower{d: Decision{Verdict: budget.Verdict{Period: budget.Day, ResetAt: reset}}}, 0, providers.OverBudget},
		{"paused", fakeAllower{d: Decision{Verdict: budget.Verdict{Allowed: true, ResetAt: reset}, Paused: true}}, 0, providers.OverBudget},
		{"the guard cannot read the log", fakeAllower{err: errors.New("database down")}, 0, providers.Server},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := &countingProvider{}
			p := Wrap(inner, &c.a)
			tag := providers.Call{Purpose: "turn", Sender: "telegram-1"}
			_, err := p.Complete(providers.WithCall(context.Background(), tag), providers.Request{})
			if inner.calls != c.calls || len(c.a.seen) != 1 || c.a.seen[0] != tag {
				t.Fatalf("%d calls, guard asked %v", inner.calls, c.a.seen)
			}
			if c.class == providers.Unknown {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Class != c.class {
				t.Fatalf("error %v, want class %s", err, c.class)
			}
			if c.class == providers.OverBudget && !pe.Until.Equal(reset) {
				t.Fatalf("resets %s, want %s", pe.Until, reset)
			}
		})
	}
}
