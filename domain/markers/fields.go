package markers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

func scheduleParser(action bool) func(string, *time.Location) (Marker, error) {
	return func(value string, loc *time.Location) (Marker, error) { return parseSchedule(value, action, loc) }
}

func parseLimitation(value string, _ *time.Location) (Marker, error) {
	f, err := fields(value, 3, 2, "title", "description", "plan")
	if err != nil {
		return nil, err
	}
	return Limitation{Title: f[0], Description: f[1], Plan: f[2]}, nil
}

func parseSelfHeal(value string, _ *time.Location) (Marker, error) {
	f, err := fields(value, 2, 2, "description", "verification")
	if err != nil {
		return nil, err
	}
	return SelfHeal{Description: f[0], Verification: f[1]}, nil
}

func parseSkillImprove(value string, _ *time.Location) (Marker, error) {
	f, err := fields(value, 2, 2, "skill", "lesson")
	if err != nil {
		return nil, err
	}
	return SkillImprove{Skill: f[0], Lesson: f[1]}, nil
}

func parseLesson(value string, _ *time.Location) (Marker, error) {
	f, err := fields(value, 2, 2, "domain", "rule")
	if err != nil {
		return nil, err
	}
	return Lesson{Domain: f[0], Rule: f[1]}, nil
}

// fields splits value on '|' into at most n trimmed parts, the last part
// keeping any further pipes (so a verification test or lesson may contain
// '|'). The first required parts must be present and non-empty; missing
// optional parts come back as "".
func fields(value string, n, required int, names ...string) ([]string, error) {
	parts := strings.SplitN(value, "|", n)
	if len(parts) < required {
		return nil, fmt.Errorf("want %s separated by '|'", strings.Join(names[:required], " | "))
	}
	out := make([]string, n)
	for i, p := range parts {
		out[i] = strings.TrimSpace(p)
	}
	for i := range required {
		if out[i] == "" {
			return nil, fmt.Errorf("empty %s", names[i])
		}
	}
	return out, nil
}

func parseSchedule(value string, action bool, loc *time.Location) (Marker, error) {
	parts := strings.Split(value, "|")
	if len(parts) != 3 {
		return nil, fmt.Errorf("want description | datetime | repeat, got %d field(s)", len(parts))
	}
	desc := strings.TrimSpace(parts[0])
	if desc == "" {
		return nil, errors.New("empty description")
	}
	due, err := parseDateTime(strings.TrimSpace(parts[1]), loc)
	if err != nil {
		return nil, err
	}
	repeat, err := ParseRepeat(parts[2])
	if err != nil {
		return nil, err
	}
	return Schedule{Description: desc, Due: due, Repeat: repeat, Action: action}, nil
}

func parseUpdateTask(value string, loc *time.Location) (Marker, error) {
	parts := strings.Split(value, "|")
	if len(parts) != 4 {
		return nil, fmt.Errorf("want id | description | due | repeat, got %d field(s)", len(parts))
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	u := UpdateTask{IDPrefix: parts[0], Description: parts[1]}
	if u.IDPrefix == "" {
		return nil, errors.New("empty task id")
	}
	if parts[2] != "" {
		due, err := parseDateTime(parts[2], loc)
		if err != nil {
			return nil, err
		}
		u.Due = due
	}
	if parts[3] != "" {
		r, err := ParseRepeat(parts[3])
		if err != nil {
			return nil, err
		}
		u.Repeat = r
	}
	if u.Description == "" && u.Due.IsZero() && u.Repeat == "" {
		return nil, errors.New("nothing to update")
	}
	return u, nil
}

func parseInterval(value string, _ *time.Location) (Marker, error) {
	n, err := strconv.ParseUint(value, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("interval %q is not a whole number of minutes", value)
	}
	if n < 1 || n > 1440 {
		return nil, fmt.Errorf("interval %d outside 1..1440 minutes", n)
	}
	return HeartbeatInterval{Minutes: int(n)}, nil
}

// RewardDomainGeneral is the domain of a reward written in the short
// "outcome | score" form, which names none.
const RewardDomainGeneral = "general"

// parseReward accepts both of the seeds' forms: "score | domain | lesson"
// (the architecture's, e.g. "+1|email|short summaries work") and
// "outcome | score" (the marker table's, e.g. "reminder was useful | 1").
func parseReward(value string, _ *time.Location) (Marker, error) {
	parts := strings.Split(value, "|")
	if len(parts) == 2 {
		outcome := strings.TrimSpace(parts[0])
		score, err := parseScore(parts[1])
		if err != nil {
			return nil, err
		}
		if outcome == "" {
			return nil, errors.New("empty outcome")
		}
		return Reward{Score: score, Domain: RewardDomainGeneral, Lesson: outcome}, nil
	}
	f, err := fields(value, 3, 3, "score", "domain", "lesson")
	if err != nil {
		return nil, errors.New("want score | domain | lesson or outcome | score separated by '|'")
	}
	score, err := parseScore(f[0])
	if err != nil {
		return nil, err
	}
	return Reward{Score: score, Domain: f[1], Lesson: f[2]}, nil
}

// parseScore reads a reward's score: -1, 0 or +1.
func parseScore(s string) (int, error) {
	s = strings.TrimSpace(s)
	score, err := strconv.Atoi(s)
	if err != nil || score < -1 || score > 1 {
		return 0, fmt.Errorf("score %q is not -1, 0 or +1", s)
	}
	return score, nil
}

// ParseRepeat reads a repeat value case-insensitively.
func ParseRepeat(s string) (Repeat, error) {
	r := Repeat(strings.ToLower(strings.TrimSpace(s)))
	switch r {
	case RepeatOnce, RepeatDaily, RepeatWeekly, RepeatMonthly, RepeatWeekdays:
		return r, nil
	}
	return "", fmt.Errorf("repeat %q is not once, daily, weekly, monthly or weekdays", strings.TrimSpace(s))
}

// Layouts carrying their own offset, tried first.
var offsetLayouts = [...]string{
	time.RFC3339, // also accepts fractional seconds
	"2006-01-02T15:04Z07:00",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04Z07:00",
	"2006-01-02T15:04:05-0700",
	"2006-01-02T15:04-0700",
}

// Layouts without an offset: read in the caller's location.
var localLayouts = [...]string{
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
}

// parseDateTime reads an ISO 8601 date and time. A value with a 'Z' or an
// offset means exactly that instant; a value without one is wall-clock
// time in loc. A date alone is rejected: a reminder needs a time.
func parseDateTime(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("empty datetime")
	}
	for _, layout := range offsetLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("datetime %q is not ISO 8601 (e.g. 2026-02-24T17:00:00Z)", s)
}
