package task

import (
	"testing"
	"time"
)

func TestNextOccurrence(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	in := func(loc *time.Location, s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name          string
		repeat        string
		loc           *time.Location
		anchor, after string
		want          string // local wall clock, "" for none
	}{
		{"once never recurs", RepeatOnce, madrid, "2026-03-28 09:00", "2026-03-28 09:00", ""},
		{"unknown never recurs", "hourly", madrid, "2026-03-28 09:00", "2026-03-28 09:00", ""},
		{"anchor in the future is first", RepeatDaily, madrid, "2026-03-28 09:00", "2026-03-27 10:00", "2026-03-28 09:00"},
		{"daily across spring forward (Madrid)", RepeatDaily, madrid, "2026-03-28 09:00", "2026-03-28 09:00", "2026-03-29 09:00"},
		{"daily after spring forward (Madrid)", RepeatDaily, madrid, "2026-03-28 09:00", "2026-03-29 09:00", "2026-03-30 09:00"},
		{"daily across fall back (Madrid)", RepeatDaily, madrid, "2026-10-24 09:00", "2026-10-24 09:00", "2026-10-25 09:00"},
		{"daily across spring forward (New York)", RepeatDaily, ny, "2026-03-07 09:00", "2026-03-07 09:00", "2026-03-08 09:00"},
		{"daily across fall back (New York)", RepeatDaily, ny, "2026-10-31 18:30", "2026-10-31 18:30", "2026-11-01 18:30"},
		{"daily skips missed days to the future", RepeatDaily, madrid, "2026-03-01 09:00", "2026-03-20 12:00", "2026-03-21 09:00"},
		{"daily later the same day", RepeatDaily, madrid, "2026-03-01 09:00", "2026-03-20 08:00", "2026-03-20 09:00"},
		{"weekly keeps the weekday across DST", RepeatWeekly, ny, "2026-03-04 07:15", "2026-03-04 07:15", "2026-03-11 07:15"},
		{"weekly after several missed", RepeatWeekly, madrid, "2026-03-02 10:00", "2026-03-25 10:00", "2026-03-30 10:00"},
		{"weekdays skip the weekend", RepeatWeekdays, madrid, "2026-03-27 08:00", "2026-03-27 08:00", "2026-03-30 08:00"},
		{"weekdays anchored on a Saturday", RepeatWeekdays, madrid, "2026-03-28 08:00", "2026-03-27 09:00", "2026-03-30 08:00"},
		{"weekdays midweek", RepeatWeekdays, ny, "2026-03-02 08:00", "2026-03-03 08:00", "2026-03-04 08:00"},
		{"monthly on the 31st falls back to April 30", RepeatMonthly, madrid, "2026-03-31 09:00", "2026-03-31 09:00", "2026-04-30 09:00"},
		{"monthly on the 31st returns to May 31", RepeatMonthly, madrid, "2026-03-31 09:00", "2026-04-30 09:00", "2026-05-31 09:00"},
		{"monthly on the 31st in a leap February", RepeatMonthly, ny, "2028-01-31 09:00", "2028-01-31 09:00", "2028-02-29 09:00"},
		{"monthly on the 31st in a plain February", RepeatMonthly, ny, "2027-01-31 09:00", "2027-01-31 09:00", "2027-02-28 09:00"},
		{"monthly on the 29th across a leap year", RepeatMonthly, madrid, "2028-01-29 09:00", "2028-01-29 09:00", "2028-02-29 09:00"},
		{"monthly across year end", RepeatMonthly, madrid, "2026-12-15 09:00", "2026-12-15 09:00", "2027-01-15 09:00"},
		{"monthly across DST keeps local time", RepeatMonthly, madrid, "2026-03-15 09:00", "2026-03-15 09:00", "2026-04-15 09:00"},
		{"monthly after months missed", RepeatMonthly, ny, "2026-01-10 09:00", "2026-06-20 09:00", "2026-07-10 09:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := NextOccurrence(c.repeat, in(c.loc, c.anchor), in(c.loc, c.after), c.loc)
			if c.want == "" {
				if ok {
					t.Fatalf("got %v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatal("got none")
			}
			if w := in(c.loc, c.want); !got.Equal(w) {
				t.Fatalf("got %v, want %v", got.In(c.loc), w)
			}
		})
	}
}

// TestNextOccurrenceDSTIsWallClock checks the absolute gap: a daily
// reminder across spring forward is 23 hours later, not 24.
func TestNextOccurrenceDSTIsWallClock(t *testing.T) {
	madrid, _ := time.LoadLocation("Europe/Madrid")
	a := time.Date(2026, 3, 28, 9, 0, 0, 0, madrid)
	next, _ := NextOccurrence(RepeatDaily, a, a, madrid)
	if d := next.Sub(a); d != 23*time.Hour {
		t.Fatalf("gap %v, want 23h", d)
	}
}
