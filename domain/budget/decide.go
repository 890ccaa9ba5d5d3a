package budget

import (
	"time"
)

// Periods a limit runs over; each starts at midnight in the owner's time
// zone (a month on its first day).
const (
	Day   = "day"
	Month = "month"
)

// Thresholds: background work (heartbeat, self-heal, action tasks) stops
// at BackgroundShare of a limit, so what is left is kept for people; the
// owner hears at AlertShare and again at 1.
const (
	BackgroundShare = 0.9
	AlertShare      = 0.8
)

// PeriodStart is when the period holding now began in loc.
func PeriodStart(period string, now time.Time, loc *time.Location) time.Time {
	t := now.In(loc)
	if period == Month {
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// PeriodEnd is when the period holding now ends in loc: when its limit
// resets. Dates are normalized, so a day across a clock change is still
// midnight to midnight.
func PeriodEnd(period string, now time.Time, loc *time.Location) time.Time {
	s := PeriodStart(period, now, loc)
	if period == Month {
		return time.Date(s.Year(), s.Month()+1, 1, 0, 0, 0, 0, loc)
	}
	return time.Date(s.Year(), s.Month(), s.Day()+1, 0, 0, 0, 0, loc)
}

// Limits are what one scope (everything together, or one sender) may
// spend per day and per month.
type Limits struct {
	Daily   Amount `json:"daily,omitzero"`
	Monthly Amount `json:"monthly,omitzero"`
}

// IsZero says whether nothing is limited.
func (l Limits) IsZero() bool { return l.Daily.IsZero() && l.Monthly.IsZero() }

// Of is the limit of a period.
func (l Limits) Of(period string) Amount {
	if period == Month {
		return l.Monthly
	}
	return l.Daily
}

// Scope is one set of limits and what was spent against them this day
// and this month. Name is "" for everything together, else a sender key.
type Scope struct {
	Name   string
	Limits Limits
	Day    Spend
	Month  Spend
}

// SpentIn is what the scope spent in the period.
func (s Scope) SpentIn(period string) Spend {
	if period == Month {
		return s.Month
	}
	return s.Day
}

// Verdict is the decision on one call: allowed or not, and which limit
// stopped it (or comes nearest) and when that limit resets.
type Verdict struct {
	Allowed bool
	Scope   string // "" everything together, else the sender key
	Period  string
	Limit   Amount
	Spent   Spend
	// Share is the largest share of any limit spent (1 is all of it).
	Share   float64
	ResetAt time.Time
}

// Decide takes a call's decision: it may go ahead while every limit of
// every scope has room (for background work, while under
// BackgroundShare of each). The verdict names the limit nearest to its
// end, which stopped the call when it is refused.
func Decide(scopes []Scope, background bool, now time.Time, loc *time.Location) Verdict {
	stop := 1.0
	if background {
		stop = BackgroundShare
	}
	v := Verdict{Allowed: true, Share: -1}
	for _, s := range scopes {
		for _, period := range []string{Day, Month} {
			limit := s.Limits.Of(period)
			if limit.IsZero() {
				continue
			}
			spent := s.SpentIn(period)
			share := spent.Fraction(limit)
			refused := share >= stop
			if (refused && v.Allowed) || (refused == !v.Allowed && share > v.Share) {
				v = Verdict{Allowed: !refused, Scope: s.Name, Period: period, Limit: limit, Spent: spent, Share: share,
					ResetAt: PeriodEnd(period, now, loc)}
			}
		}
	}
	if v.Share < 0 {
		v.Share = 0
	}
	return v
}

// Runaway says whether one more call would make more than most within
// the guard's window, given the calls already in it: the loop or sender
// is then paused until the window has room.
func Runaway(calls int64, most int) bool { return most > 0 && calls >= int64(most) }

// Line is one limit's state: what its scope spent in the period, against
// what limit (zero: none), and when the period ends.
type Line struct {
	Scope   string // "" everything together, else a sender key
	Period  string
	Limit   Amount
	Spent   Spend
	ResetAt time.Time
}

// Left is what remains of the limit.
func (l Line) Left() Amount { return l.Spent.Left(l.Limit) }
