package markers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// kind says how a known name is written in a reply.
type kind int

const (
	unknownName kind = iota
	// valued markers are NAME: value.
	valued
	// bare markers are the name alone; a trailing ':' and anything after
	// it on the line are tolerated and ignored.
	bare
)

// kindOf classifies a protocol name. SILENT is absent on purpose: it is
// an ordinary English word, so it is only recognised as a whole line (see
// isSilentLine), never inline.
func kindOf(name string) kind {
	switch name {
	case NameSchedule, NameScheduleAction, NameCancelTask, NameUpdateTask,
		NameLangSwitch, NamePersonality, NameProjectActivate,
		NameHeartbeatAdd, NameHeartbeatRemove, NameHeartbeatInterval,
		NameHeartbeatSuppressSection, NameHeartbeatUnsuppressSection,
		NameLimitation, NameSelfHeal, NameBugReport, NameSkillImprove,
		NameActionOutcome, NameReward, NameLesson:
		return valued
	case NameForgetConversation, NamePurgeFacts, NameProjectDeactivate,
		NameWhatsAppQR, NameHeartbeatOK, NameSelfHealResolved:
		return bare
	}
	return unknownName
}

// bareMarker returns the marker for a bare name.
func bareMarker(name string) Marker {
	switch name {
	case NameForgetConversation:
		return ForgetConversation{}
	case NamePurgeFacts:
		return PurgeFacts{}
	case NameProjectDeactivate:
		return ProjectDeactivate{}
	case NameWhatsAppQR:
		return WhatsAppQR{}
	case NameHeartbeatOK:
		return HeartbeatOK{}
	case NameSelfHealResolved:
		return SelfHealResolved{}
	}
	panic("markers: bareMarker called with " + name) // unreachable: guarded by kindOf
}

// parseValued turns the value of a valued marker into its typed form. The
// error is the user-facing reason recorded in Invalid.
func parseValued(name, value string, loc *time.Location) (Marker, error) {
	value = strings.TrimSpace(value)
	switch name {
	case NameSchedule, NameScheduleAction:
		return parseSchedule(value, name == NameScheduleAction, loc)
	case NameUpdateTask:
		return parseUpdateTask(value, loc)
	case NameHeartbeatInterval:
		return parseInterval(value)
	case NameLimitation:
		f, err := fields(value, 3, 2, "title", "description", "plan")
		if err != nil {
			return nil, err
		}
		return Limitation{Title: f[0], Description: f[1], Plan: f[2]}, nil
	case NameSelfHeal:
		f, err := fields(value, 2, 2, "description", "verification")
		if err != nil {
			return nil, err
		}
		return SelfHeal{Description: f[0], Verification: f[1]}, nil
	case NameSkillImprove:
		f, err := fields(value, 2, 2, "skill", "lesson")
		if err != nil {
			return nil, err
		}
		return SkillImprove{Skill: f[0], Lesson: f[1]}, nil
	case NameLesson:
		f, err := fields(value, 2, 2, "domain", "rule")
		if err != nil {
			return nil, err
		}
		return Lesson{Domain: f[0], Rule: f[1]}, nil
	case NameReward:
		return parseReward(value)
	}
	if value == "" {
		return nil, errors.New("empty value")
	}
	switch name {
	case NameCancelTask:
		return CancelTask{IDPrefix: value}, nil
	case NameLangSwitch:
		return LangSwitch{Language: value}, nil
	case NamePersonality:
		return Personality{Style: value}, nil
	case NameProjectActivate:
		return ProjectActivate{Project: value}, nil
	case NameHeartbeatAdd:
		return HeartbeatAdd{Item: value}, nil
	case NameHeartbeatRemove:
		return HeartbeatRemove{Item: value}, nil
	case NameHeartbeatSuppressSection:
		return HeartbeatSuppressSection{Section: value}, nil
	case NameHeartbeatUnsuppressSection:
		return HeartbeatUnsuppressSection{Section: value}, nil
	case NameBugReport:
		return BugReport{Description: value}, nil
	case NameActionOutcome:
		return ActionOutcome{Outcome: value}, nil
	}
	return nil, fmt.Errorf("no parser for %s", name)
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

func parseInterval(value string) (Marker, error) {
	n, err := strconv.ParseUint(value, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("interval %q is not a whole number of minutes", value)
	}
	if n < 1 || n > 1440 {
		return nil, fmt.Errorf("interval %d outside 1..1440 minutes", n)
	}
	return HeartbeatInterval{Minutes: int(n)}, nil
}

func parseReward(value string) (Marker, error) {
	f, err := fields(value, 3, 3, "score", "domain", "lesson")
	if err != nil {
		return nil, err
	}
	score, err := strconv.Atoi(f[0])
	if err != nil || score < -1 || score > 1 {
		return nil, fmt.Errorf("score %q is not -1, 0 or +1", f[0])
	}
	return Reward{Score: score, Domain: f[1], Lesson: f[2]}, nil
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
