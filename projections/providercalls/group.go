package providercalls

import (
	"fmt"
	"slices"
	"time"
)

// What usage reports group calls by.
const (
	ByDay     = "day"
	BySender  = "sender"
	ByPurpose = "purpose"
	ByModel   = "model"
)

// OmegaSender names, in reports, the calls omega made for itself (a
// heartbeat, a self-heal follow-up).
const OmegaSender = "(omega)"

// Total is the calls of one group: how many, how many failed, tokens in
// and out together, and the cost providers reported.
type Total struct {
	Group  string
	Calls  int64
	Failed int64
	Tokens int64
	USD    float64
}

// Group sums calls by day (in loc), sender, purpose or model, in the
// group's order (days oldest first, the rest by name).
func Group(calls []Call, by string, loc *time.Location) ([]Total, error) {
	key, err := keyOf(by, loc)
	if err != nil {
		return nil, err
	}
	sums := map[string]*Total{}
	for _, c := range calls {
		k := key(c)
		t, ok := sums[k]
		if !ok {
			t = &Total{Group: k}
			sums[k] = t
		}
		t.add(c)
	}
	out := make([]Total, 0, len(sums))
	for _, t := range sums {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Total) int {
		switch {
		case a.Group < b.Group:
			return -1
		case a.Group > b.Group:
			return 1
		}
		return 0
	})
	return out, nil
}

func (t *Total) add(c Call) {
	t.Calls++
	if c.Failed {
		t.Failed++
	}
	t.Tokens += c.Tokens
	t.USD += c.USD
}

// keyOf is the group a call belongs to.
func keyOf(by string, loc *time.Location) (func(Call) string, error) {
	switch by {
	case ByDay:
		return func(c Call) string { return c.At.In(loc).Format(time.DateOnly) }, nil
	case BySender:
		return func(c Call) string {
			if c.Sender == "" {
				return OmegaSender
			}
			return c.Sender
		}, nil
	case ByPurpose:
		return func(c Call) string { return c.Purpose }, nil
	case ByModel:
		return func(c Call) string {
			if c.Model == "" {
				return "(unknown)"
			}
			return c.Model
		}, nil
	}
	return nil, fmt.Errorf("usage: --by is day, sender, purpose or model (got %q)", by)
}

// Series is spend over time by purpose: for each day (in loc) of the
// calls, each purpose's total.
type Series struct {
	Days     []string
	Purposes []string
	// Of[day][purpose] is that day's total for the purpose.
	Of map[string]map[string]Total
}

// DailyByPurpose builds the series of the calls.
func DailyByPurpose(calls []Call, loc *time.Location) Series {
	s := Series{Of: map[string]map[string]Total{}}
	for _, c := range calls {
		day := c.At.In(loc).Format(time.DateOnly)
		if s.Of[day] == nil {
			s.Of[day] = map[string]Total{}
			s.Days = append(s.Days, day)
		}
		t := s.Of[day][c.Purpose]
		t.Group = c.Purpose
		t.add(c)
		s.Of[day][c.Purpose] = t
		if !slices.Contains(s.Purposes, c.Purpose) {
			s.Purposes = append(s.Purposes, c.Purpose)
		}
	}
	slices.Sort(s.Days)
	slices.Sort(s.Purposes)
	return s
}
