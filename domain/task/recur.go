package task

import "time"

// Task repeat values (the ones the marker parser accepts).
const (
	RepeatOnce     = "once"
	RepeatDaily    = "daily"
	RepeatWeekly   = "weekly"
	RepeatMonthly  = "monthly"
	RepeatWeekdays = "weekdays"
)

// Recurring reports whether repeat names a series rather than one firing.
func Recurring(repeat string) bool {
	switch repeat {
	case RepeatDaily, RepeatWeekly, RepeatMonthly, RepeatWeekdays:
		return true
	}
	return false
}

// NextOccurrence returns the first occurrence of the series anchored at
// anchor that falls strictly after after, computed on the wall clock of
// loc: a daily 09:00 stays 09:00 local across DST changes, and a monthly
// series anchored on the 31st falls on each month's last day when the
// month is shorter. It returns false for a task that does not recur.
func NextOccurrence(repeat string, anchor, after time.Time, loc *time.Location) (time.Time, bool) {
	if !Recurring(repeat) {
		return time.Time{}, false
	}
	if loc == nil {
		loc = time.UTC
	}
	a := anchor.In(loc)
	if a.After(after) {
		// The anchor itself is the series' first occurrence.
		if repeat != RepeatWeekdays || weekday(a) {
			return anchor, true
		}
	}
	if repeat == RepeatMonthly {
		return nextMonthly(a, after, loc), true
	}
	step := 1
	if repeat == RepeatWeekly {
		step = 7
	}
	// Start from the later of the anchor's date and after's local date,
	// aligned to the series, and walk forward in calendar days.
	start := a
	if l := after.In(loc); l.After(a) {
		days := daysBetween(a, l)
		days -= days % step
		start = a.AddDate(0, 0, days)
	}
	for d := 0; ; d += step {
		c := at(start.AddDate(0, 0, d), a, loc)
		if c.After(after) && c.After(anchor) && (repeat != RepeatWeekdays || weekday(c)) {
			return c, true
		}
	}
}

func nextMonthly(a, after time.Time, loc *time.Location) time.Time {
	l := after.In(loc)
	months := (l.Year()-a.Year())*12 + int(l.Month()-a.Month())
	if months < 1 {
		months = 1
	}
	for n := months - 1; ; n++ {
		if n < 1 {
			continue
		}
		c := monthOffset(a, n, loc)
		if c.After(after) {
			return c
		}
	}
}

// monthOffset is the anchor moved n months on, its day clamped to the
// target month's last day.
func monthOffset(a time.Time, n int, loc *time.Location) time.Time {
	first := time.Date(a.Year(), a.Month()+time.Month(n), 1, 0, 0, 0, 0, loc)
	day := min(a.Day(), daysIn(first.Year(), first.Month()))
	return time.Date(first.Year(), first.Month(), day, a.Hour(), a.Minute(), a.Second(), a.Nanosecond(), loc)
}

// at is day's date at the anchor's wall-clock time.
func at(day, a time.Time, loc *time.Location) time.Time {
	return time.Date(day.Year(), day.Month(), day.Day(), a.Hour(), a.Minute(), a.Second(), a.Nanosecond(), loc)
}

func daysBetween(a, b time.Time) int {
	da := time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
	db := time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
	return int(db.Sub(da).Hours() / 24)
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

func weekday(t time.Time) bool { return t.Weekday() != time.Saturday && t.Weekday() != time.Sunday }
