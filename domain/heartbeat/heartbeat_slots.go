package heartbeat

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// HeartbeatSlot is the clock-aligned boundary at or before now: intervals
// count from local midnight, so 30 minutes fires at :00 and :30 and a
// day's boundaries do not drift across DST changes.
func HeartbeatSlot(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	if interval <= 0 {
		interval = 30 * time.Minute
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	return midnight.Add(now.Sub(midnight).Truncate(interval))
}

// NextHeartbeatSlot is the first boundary after now; the last slot of a
// day ends at the next midnight.
func NextHeartbeatSlot(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	if interval <= 0 {
		interval = 30 * time.Minute
	}
	slot := HeartbeatSlot(now, interval, loc)
	next := slot.Add(interval)
	l := slot.In(loc)
	tomorrow := time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
	if next.After(tomorrow) {
		next = tomorrow
	}
	return next
}

// HeartbeatOvershoot is how late a wake-up may be and still run its slot;
// later than that (a suspended laptop) the slot is skipped and the clock
// re-aligned.
const HeartbeatOvershoot = 2 * time.Minute

// --- active hours ---

// ActiveHours is a daily window in local time; the zero value is always
// active. End before Start wraps across midnight.
type ActiveHours struct {
	Start, End int // minutes after midnight
	Set        bool
}

var hhmm = regexp.MustCompile(`^([01]?\d|2[0-3]):([0-5]\d)$`)

// ParseActiveHours reads "HH:MM-HH:MM"; empty means always.
func ParseActiveHours(s string) (ActiveHours, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ActiveHours{}, nil
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return ActiveHours{}, fmt.Errorf("active hours %q: want HH:MM-HH:MM", s)
	}
	start, err := parseHHMM(from)
	if err != nil {
		return ActiveHours{}, fmt.Errorf("active hours %q: %w", s, err)
	}
	end, err := parseHHMM(to)
	if err != nil {
		return ActiveHours{}, fmt.Errorf("active hours %q: %w", s, err)
	}
	if start == end {
		return ActiveHours{}, fmt.Errorf("active hours %q: start equals end", s)
	}
	return ActiveHours{Start: start, End: end, Set: true}, nil
}

func parseHHMM(s string) (int, error) {
	m := hhmm.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	h, _ := strconv.Atoi(m[1])
	mm, _ := strconv.Atoi(m[2])
	return h*60 + mm, nil
}

func minuteOfDay(t time.Time) int { return t.Hour()*60 + t.Minute() }

// Contains says whether t (in loc) is inside the window.
func (a ActiveHours) Contains(t time.Time, loc *time.Location) bool {
	if !a.Set {
		return true
	}
	m := minuteOfDay(t.In(loc))
	if a.Start < a.End {
		return m >= a.Start && m < a.End
	}
	return m >= a.Start || m < a.End
}

// NextStart is the next start of the window after t: where a quiet
// heartbeat sleeps to. On a day whose start time does not exist (DST) it
// is the first instant after the gap.
func (a ActiveHours) NextStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	for d := 0; d <= 2; d++ {
		s := time.Date(l.Year(), l.Month(), l.Day()+d, a.Start/60, a.Start%60, 0, 0, loc)
		if s.After(t) {
			return s
		}
	}
	return t.Add(24 * time.Hour)
}

// --- checklist sections ---
