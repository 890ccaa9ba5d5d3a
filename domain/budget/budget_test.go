package budget

import (
	"errors"
	"testing"
	"time"
)

func TestParseAmount(t *testing.T) {
	cases := []struct {
		in   string
		want Amount
		err  bool
	}{
		{"", Amount{}, false},
		{"50000tok", Amount{Tokens: 50000}, false},
		{"2.50usd", Amount{USD: 2.5}, false},
		{" 50000TOK , 2.50usd ", Amount{Tokens: 50000, USD: 2.5}, false},
		{"2.50usd,50000tok", Amount{Tokens: 50000, USD: 2.5}, false},
		{"50000", Amount{}, true},
		{"0tok", Amount{}, true},
		{"-5usd", Amount{}, true},
		{"1tok,2tok", Amount{}, true},
		{"NaNusd", Amount{}, true},
		{"2.5eur", Amount{}, true},
		{"1.5tok", Amount{}, true},
	}
	for _, c := range cases {
		got, err := ParseAmount(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseAmount(%q) = %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrBadAmount) {
			t.Errorf("ParseAmount(%q): %v is not ErrBadAmount", c.in, err)
		}
		if err == nil {
			if back, _ := ParseAmount(got.String()); back != got {
				t.Errorf("%q does not read back as %+v", got.String(), got)
			}
		}
	}
}

// Days and months start at midnight in the owner's zone, also across a
// clock change (a 23-hour day).
func TestPeriods(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data")
	}
	cases := []struct {
		period     string
		now        time.Time
		start, end time.Time
	}{
		{Day, time.Date(2026, 3, 8, 12, 0, 0, 0, ny), time.Date(2026, 3, 8, 0, 0, 0, 0, ny), time.Date(2026, 3, 9, 0, 0, 0, 0, ny)},
		{Day, time.Date(2026, 11, 27, 4, 30, 0, 0, time.UTC), time.Date(2026, 11, 26, 0, 0, 0, 0, ny), time.Date(2026, 11, 27, 0, 0, 0, 0, ny)},
		{Month, time.Date(2026, 12, 31, 23, 59, 0, 0, ny), time.Date(2026, 12, 1, 0, 0, 0, 0, ny), time.Date(2027, 1, 1, 0, 0, 0, 0, ny)},
	}
	for _, c := range cases {
		if s, e := PeriodStart(c.period, c.now, ny), PeriodEnd(c.period, c.now, ny); !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("%s of %s: %s to %s, want %s to %s", c.period, c.now, s, e, c.start, c.end)
		}
	}
	if d := PeriodEnd(Day, time.Date(2026, 3, 8, 12, 0, 0, 0, ny), ny).Sub(PeriodStart(Day, time.Date(2026, 3, 8, 12, 0, 0, 0, ny), ny)); d != 23*time.Hour {
		t.Errorf("the day the clocks go forward lasts %s", d)
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := Limits{Daily: Amount{Tokens: 100}}
	usd := Limits{Monthly: Amount{USD: 1}}
	cases := []struct {
		name       string
		scopes     []Scope
		background bool
		allowed    bool
		scope      string
		period     string
	}{
		{"nothing limited", []Scope{{Day: Spend{Tokens: 1e9}}}, false, true, "", ""},
		{"under", []Scope{{Limits: day, Day: Spend{Tokens: 99}}}, false, true, "", Day},
		{"at the limit", []Scope{{Limits: day, Day: Spend{Tokens: 100}}}, false, false, "", Day},
		{"background under 90 %", []Scope{{Limits: day, Day: Spend{Tokens: 89}}}, true, true, "", Day},
		{"background at 90 %", []Scope{{Limits: day, Day: Spend{Tokens: 90}}}, true, false, "", Day},
		{"a person at 90 %", []Scope{{Limits: day, Day: Spend{Tokens: 90}}}, false, true, "", Day},
		{"dollars spent, tokens not", []Scope{{Limits: Limits{Daily: Amount{Tokens: 100, USD: 1}}, Day: Spend{Tokens: 1, USD: 1}}}, false, false, "", Day},
		{"the sender's month", []Scope{{Limits: day, Day: Spend{Tokens: 10}}, {Name: "t-1", Limits: usd, Month: Spend{USD: 1.5}}}, false, false, "t-1", Month},
		{"the nearest names the verdict", []Scope{{Limits: day, Day: Spend{Tokens: 10}}, {Name: "t-1", Limits: usd, Month: Spend{USD: 0.5}}}, false, true, "t-1", Month},
	}
	for _, c := range cases {
		v := Decide(c.scopes, c.background, now, time.UTC)
		if v.Allowed != c.allowed || v.Scope != c.scope || v.Period != c.period {
			t.Errorf("%s: %+v; want allowed %v, scope %q, period %q", c.name, v, c.allowed, c.scope, c.period)
		}
		if c.period == Day && !v.ResetAt.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: resets %s", c.name, v.ResetAt)
		}
	}
}

func TestSlots(t *testing.T) {
	limit := Amount{Tokens: 1000, USD: 1}
	seen := Spend{Tokens: 100, USD: 0.05, Calls: 1}
	cases := []struct {
		name    string
		spent   Spend
		largest Spend
		want    int
	}{
		{"nothing limited", Spend{}, seen, 64},
		{"no call seen yet", Spend{}, Spend{}, 1},
		{"calls that cost nothing", Spend{}, Spend{Calls: 1}, 64},
		{"room for nine", Spend{Tokens: 100}, seen, 9},
		{"dollars bind first", Spend{Tokens: 100, USD: 0.8}, seen, 4},
		{"less than a call left", Spend{Tokens: 950}, seen, 1},
		{"nothing left", Spend{Tokens: 1000}, seen, 0},
		{"bounded by most", Spend{}, Spend{Tokens: 1, USD: 0.0001, Calls: 1}, 64},
	}
	for _, c := range cases {
		l := limit
		if c.name == "nothing limited" {
			l = Amount{}
		}
		if got := c.spent.Slots(l, c.largest, 64); got != c.want {
			t.Errorf("%s: %d slots, want %d", c.name, got, c.want)
		}
	}
}

func TestRunaway(t *testing.T) {
	if Runaway(59, 60) || !Runaway(60, 60) || Runaway(1000, 0) {
		t.Fatal("the 61st call in the window is the first refused; 0 is no guard")
	}
}

func TestSenderLimitsFold(t *testing.T) {
	var l SenderLimits
	l.Apply(BudgetSet{Channel: "telegram", SenderID: "1", Limits: Limits{Daily: Amount{Tokens: 5}}}, 1, time.Time{})
	l.Apply(BudgetSet{Channel: "telegram", SenderID: "2", Limits: Limits{Daily: Amount{Tokens: 7}}}, 2, time.Time{})
	l.Apply(BudgetSet{Channel: "telegram", SenderID: "1"}, 3, time.Time{})
	if _, ok := l.Of["telegram-1"]; ok || l.Of["telegram-2"].Daily.Tokens != 7 || l.Version() != 3 {
		t.Fatalf("folded %+v", l)
	}
}
