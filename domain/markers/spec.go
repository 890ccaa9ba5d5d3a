package markers

import (
	"errors"
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
	// wholeLine markers (SILENT) are ordinary words, recognised only as a
	// line of their own (see isSilentLine), never inline.
	wholeLine
)

// Spec declares one marker: its protocol name, how it is written and
// parsed, and when it is applied relative to the others. It is the one
// place a marker is declared: the parser reads it here, and the applier in
// handlers keys one function per Name (a test there checks that every
// spec has one). Adding a marker is a Spec, a type, and that function.
type Spec struct {
	Name string
	// Order is the seed's processing order (1 first). 0 applies after the
	// ordered markers, keeping the order they were written in.
	Order int
	// Example is a valid occurrence, used by tests to prove the spec
	// parses into its marker type.
	Example string
	kind    kind
	// parse reads the trimmed value of a valued marker; for bare and
	// whole-line markers it ignores the value.
	parse func(value string, loc *time.Location) (Marker, error)
}

// specs lists every marker, in the order Names reports them.
var specs = []Spec{
	{Name: NameSchedule, Order: 1, kind: valued, parse: scheduleParser(false), Example: "SCHEDULE: Call Juan | 2026-02-24T17:00:00Z | once"},
	{Name: NameScheduleAction, Order: 2, kind: valued, parse: scheduleParser(true), Example: "SCHEDULE_ACTION: Check the news | 2026-02-24T08:00:00Z | daily"},
	{Name: NameCancelTask, Order: 3, kind: valued, parse: text(func(v string) Marker { return CancelTask{IDPrefix: v} }), Example: "CANCEL_TASK: a1b2c3"},
	{Name: NameUpdateTask, Order: 4, kind: valued, parse: parseUpdateTask, Example: "UPDATE_TASK: a1b2c3 | Call Ana | | "},
	{Name: NameLangSwitch, Order: 8, kind: valued, parse: text(func(v string) Marker { return LangSwitch{Language: v} }), Example: "LANG_SWITCH: es"},
	{Name: NamePersonality, Order: 9, kind: valued, parse: text(func(v string) Marker { return Personality{Style: v} }), Example: "PERSONALITY: brief"},
	{Name: NameForgetConversation, Order: 10, kind: bare, parse: fixed(ForgetConversation{}), Example: "FORGET_CONVERSATION"},
	{Name: NamePurgeFacts, Order: 11, kind: bare, parse: fixed(PurgeFacts{}), Example: "PURGE_FACTS"},
	{Name: NameProjectActivate, Order: 5, kind: valued, parse: text(func(v string) Marker { return ProjectActivate{Project: v} }), Example: "PROJECT_ACTIVATE: omega"},
	{Name: NameProjectDeactivate, Order: 6, kind: bare, parse: fixed(ProjectDeactivate{}), Example: "PROJECT_DEACTIVATE"},
	{Name: NameWhatsAppQR, Order: 7, kind: bare, parse: fixed(WhatsAppQR{}), Example: "WHATSAPP_QR"},
	{Name: NameHeartbeatAdd, Order: 12, kind: valued, parse: text(func(v string) Marker { return HeartbeatAdd{Item: v} }), Example: "HEARTBEAT_ADD: water the plants"},
	{Name: NameHeartbeatRemove, Order: 13, kind: valued, parse: text(func(v string) Marker { return HeartbeatRemove{Item: v} }), Example: "HEARTBEAT_REMOVE: plants"},
	{Name: NameHeartbeatInterval, Order: 14, kind: valued, parse: parseInterval, Example: "HEARTBEAT_INTERVAL: 30"},
	{Name: NameHeartbeatSuppressSection, Order: 15, kind: valued, parse: text(func(v string) Marker { return HeartbeatSuppressSection{Section: v} }), Example: "HEARTBEAT_SUPPRESS_SECTION: news"},
	{Name: NameHeartbeatUnsuppressSection, Order: 16, kind: valued, parse: text(func(v string) Marker { return HeartbeatUnsuppressSection{Section: v} }), Example: "HEARTBEAT_UNSUPPRESS_SECTION: news"},
	{Name: NameHeartbeatOK, Order: 17, kind: bare, parse: fixed(HeartbeatOK{}), Example: "HEARTBEAT_OK"},
	{Name: NameLimitation, Order: 18, kind: valued, parse: parseLimitation, Example: "LIMITATION: No calendar | I cannot read calendars | add a calendar tool"},
	{Name: NameSelfHeal, Order: 19, kind: valued, parse: parseSelfHeal, Example: "SELF_HEAL: replies are cut | send a 5000-character reply"},
	{Name: NameSelfHealResolved, Order: 20, kind: bare, parse: fixed(SelfHealResolved{}), Example: "SELF_HEAL_RESOLVED"},
	{Name: NameBugReport, kind: valued, parse: text(func(v string) Marker { return BugReport{Description: v} }), Example: "BUG_REPORT: the reminder fired twice"},
	{Name: NameSkillImprove, kind: valued, parse: parseSkillImprove, Example: "SKILL_IMPROVE: google | check the date first"},
	{Name: NameActionOutcome, kind: valued, parse: text(func(v string) Marker { return ActionOutcome{Outcome: v} }), Example: "ACTION_OUTCOME: done"},
	{Name: NameReward, kind: valued, parse: parseReward, Example: "REWARD: +1 | email | short summaries work"},
	{Name: NameLesson, kind: valued, parse: parseLesson, Example: "LESSON: email | summarise in three lines"},
	{Name: NameSilent, kind: wholeLine, parse: fixed(Silent{}), Example: "SILENT"},
	{Name: NameBuildProposal, kind: valued, parse: text(func(v string) Marker { return BuildProposal{Request: v} }), Example: "BUILD_PROPOSAL: a CLI that converts CSV to JSON"},
}

var byName = func() map[string]*Spec {
	m := make(map[string]*Spec, len(specs))
	for i := range specs {
		m[specs[i].Name] = &specs[i]
	}
	return m
}()

// Specs returns every marker's spec.
func Specs() []Spec { return append([]Spec(nil), specs...) }

// Lookup returns the spec of a protocol name.
func Lookup(name string) (Spec, bool) {
	s, ok := byName[name]
	if !ok {
		return Spec{}, false
	}
	return *s, true
}

// Names returns every protocol name the parser recognises.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// kindOf classifies a name for inline recognition. SILENT counts as
// unknown here on purpose: it is an ordinary English word.
func kindOf(name string) kind {
	if s, ok := byName[name]; ok && s.kind != wholeLine {
		return s.kind
	}
	return unknownName
}

// parseMarker turns the value of a known marker into its typed form. The
// error is the user-facing reason recorded in Invalid.
func parseMarker(name, value string, loc *time.Location) (Marker, error) {
	return byName[name].parse(value, loc)
}

// fixed is the parser of a marker without a value.
func fixed(m Marker) func(string, *time.Location) (Marker, error) {
	return func(string, *time.Location) (Marker, error) { return m, nil }
}

// text is the parser of a marker whose value is one non-empty string.
func text(build func(string) Marker) func(string, *time.Location) (Marker, error) {
	return func(value string, _ *time.Location) (Marker, error) {
		if value == "" {
			return nil, errors.New("empty value")
		}
		return build(value), nil
	}
}
