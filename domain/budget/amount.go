// Package budget holds the owner's spending limits and the decision a
// provider call is taken by: amounts in tokens and dollars, the periods
// they reset on in the owner's time zone, the limits set per sender, and
// the events that record them (BudgetSet, BudgetExceeded, LoopPaused).
package budget

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is a quantity in tokens, in dollars, or both; a zero part is no
// limit in that unit.
type Amount struct {
	Tokens int64   `json:"tokens,omitempty"`
	USD    float64 `json:"usd,omitempty"`
}

// IsZero says whether the amount limits nothing.
func (a Amount) IsZero() bool { return a.Tokens == 0 && a.USD == 0 }

// String writes the amount as ParseAmount reads it ("50000tok,2.50usd").
func (a Amount) String() string {
	var parts []string
	if a.Tokens > 0 {
		parts = append(parts, strconv.FormatInt(a.Tokens, 10)+"tok")
	}
	if a.USD > 0 {
		parts = append(parts, strconv.FormatFloat(a.USD, 'f', -1, 64)+"usd")
	}
	return strings.Join(parts, ",")
}

// ErrBadAmount is what every unreadable amount wraps.
var ErrBadAmount = errors.New("budget: an amount is a number with its unit, tok or usd (50000tok, 2.50usd, or both: 50000tok,2.50usd)")

// ParseAmount reads "50000tok", "2.50usd" or both separated by a comma;
// empty is no limit.
func ParseAmount(s string) (Amount, error) {
	var a Amount
	s = strings.TrimSpace(s)
	if s == "" {
		return a, nil
	}
	for _, part := range strings.Split(s, ",") {
		if err := a.add(strings.ToLower(strings.TrimSpace(part))); err != nil {
			return Amount{}, fmt.Errorf("%q: %w", s, err)
		}
	}
	return a, nil
}

func (a *Amount) add(part string) error {
	switch {
	case strings.HasSuffix(part, "tok") && a.Tokens == 0:
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(part, "tok")), 10, 64)
		if err != nil || n <= 0 {
			return ErrBadAmount
		}
		a.Tokens = n
	case strings.HasSuffix(part, "usd") && a.USD == 0:
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(part, "usd")), 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return ErrBadAmount
		}
		a.USD = f
	default:
		return ErrBadAmount
	}
	return nil
}

// Spend is what calls took: tokens in and out, the cost providers
// reported, and how many calls.
type Spend struct {
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd"`
	Calls  int64   `json:"calls"`
}

// Add is the two spends together.
func (s Spend) Add(o Spend) Spend {
	return Spend{Tokens: s.Tokens + o.Tokens, USD: s.USD + o.USD, Calls: s.Calls + o.Calls}
}

// Max is, unit by unit, the larger of the two.
func (s Spend) Max(o Spend) Spend {
	return Spend{Tokens: max(s.Tokens, o.Tokens), USD: math.Max(s.USD, o.USD), Calls: max(s.Calls, o.Calls)}
}

// Fraction is the largest share of the limit spent in any limited unit
// (1 is all of it); 0 when nothing is limited.
func (s Spend) Fraction(limit Amount) float64 {
	var f float64
	if limit.Tokens > 0 {
		f = float64(s.Tokens) / float64(limit.Tokens)
	}
	if limit.USD > 0 {
		f = math.Max(f, s.USD/limit.USD)
	}
	return f
}

// Left is what remains of limit, never below zero, in its limited units.
func (s Spend) Left(limit Amount) Amount {
	var a Amount
	if limit.Tokens > 0 {
		a.Tokens = max(limit.Tokens-s.Tokens, 0)
	}
	if limit.USD > 0 {
		a.USD = math.Max(limit.USD-s.USD, 0)
	}
	return a
}

// Slots is how many calls costing at most one call each (largest) may
// be in flight at once without the spend passing the limit by more than
// one call: what is left divided by the largest call, at least one while
// anything is left, and at most most. Nothing limited is most. A
// largest call of zero with calls seen (largest.Calls > 0) is calls
// that cost nothing as reported: most; with none seen, the size of a
// call is unknown: one.
func (s Spend) Slots(limit Amount, largest Spend, most int) int {
	n := most
	if limit.Tokens > 0 {
		n = min(n, slotsOf(float64(limit.Tokens-s.Tokens), float64(largest.Tokens), largest.Calls > 0, most))
	}
	if limit.USD > 0 {
		n = min(n, slotsOf(limit.USD-s.USD, largest.USD, largest.Calls > 0, most))
	}
	return n
}

func slotsOf(left, largest float64, seen bool, most int) int {
	switch {
	case left <= 0:
		return 0
	case largest <= 0 && seen:
		return most
	case largest <= 0:
		return 1
	}
	// The epsilon keeps 0.2/0.05 at 4, not 3.9999.
	return int(math.Max(1, math.Min(float64(most), math.Floor(left/largest+1e-9))))
}
