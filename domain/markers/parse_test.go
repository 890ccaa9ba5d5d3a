package markers

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func utc(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

// normalize makes times comparable with reflect.DeepEqual.
func normalize(ms []Marker) []Marker {
	out := make([]Marker, len(ms))
	for i, m := range ms {
		switch v := m.(type) {
		case Schedule:
			v.Due = v.Due.UTC()
			m = v
		case UpdateTask:
			if !v.Due.IsZero() {
				v.Due = v.Due.UTC()
			}
			m = v
		}
		out[i] = m
	}
	return out
}

func TestParseValidMarkers(t *testing.T) {
	due := utc(2026, 2, 24, 17, 0)
	tests := []struct {
		name  string
		reply string
		want  Marker
	}{
		{"schedule", "SCHEDULE: Call Juan | 2026-02-24T17:00:00Z | once", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatOnce}},
		{"schedule repeat mixed case", "SCHEDULE: Standup | 2026-02-24T17:00:00Z | Weekdays", Schedule{Description: "Standup", Due: due, Repeat: RepeatWeekdays}},
		{"schedule offset", "SCHEDULE: Call Juan | 2026-02-24T18:00:00+01:00 | DAILY", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatDaily}},
		{"schedule no seconds", "SCHEDULE: Call Juan | 2026-02-24T17:00 | weekly", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatWeekly}},
		{"schedule space separator", "SCHEDULE: Call Juan | 2026-02-24 17:00:00 | monthly", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatMonthly}},
		{"schedule fractional seconds", "SCHEDULE: Call Juan | 2026-02-24T17:00:00.000Z | once", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatOnce}},
		{"schedule action", "SCHEDULE_ACTION: Check BTC price | 2026-02-24T17:00:00Z | daily", Schedule{Description: "Check BTC price", Due: due, Repeat: RepeatDaily, Action: true}},
		{"cancel", "CANCEL_TASK: a1b2c3", CancelTask{IDPrefix: "a1b2c3"}},
		{"update all fields", "UPDATE_TASK: a1b2 | Call Ana | 2026-02-24T17:00:00Z | daily", UpdateTask{IDPrefix: "a1b2", Description: "Call Ana", Due: due, Repeat: RepeatDaily}},
		{"update description only", "UPDATE_TASK: a1b2 | Call Ana | | ", UpdateTask{IDPrefix: "a1b2", Description: "Call Ana"}},
		{"update due only", "UPDATE_TASK: a1b2 | | 2026-02-24T17:00:00Z |", UpdateTask{IDPrefix: "a1b2", Due: due}},
		{"update repeat only", "UPDATE_TASK: a1b2 | | | Once", UpdateTask{IDPrefix: "a1b2", Repeat: RepeatOnce}},
		{"lang switch", "LANG_SWITCH: Spanish", LangSwitch{Language: "Spanish"}},
		{"personality", "PERSONALITY: terse and dry", Personality{Style: "terse and dry"}},
		{"forget", "FORGET_CONVERSATION", ForgetConversation{}},
		{"purge", "PURGE_FACTS", PurgeFacts{}},
		{"purge with colon", "PURGE_FACTS:", PurgeFacts{}},
		{"project activate", "PROJECT_ACTIVATE: omega-trader", ProjectActivate{Project: "omega-trader"}},
		{"project deactivate", "PROJECT_DEACTIVATE", ProjectDeactivate{}},
		{"project deactivate colon", "PROJECT_DEACTIVATE:", ProjectDeactivate{}},
		{"whatsapp", "WHATSAPP_QR", WhatsAppQR{}},
		{"heartbeat add", "HEARTBEAT_ADD: Check disk usage", HeartbeatAdd{Item: "Check disk usage"}},
		{"heartbeat remove", "HEARTBEAT_REMOVE: disk", HeartbeatRemove{Item: "disk"}},
		{"heartbeat interval", "HEARTBEAT_INTERVAL: 15", HeartbeatInterval{Minutes: 15}},
		{"heartbeat interval min", "HEARTBEAT_INTERVAL: 1", HeartbeatInterval{Minutes: 1}},
		{"heartbeat interval max", "HEARTBEAT_INTERVAL: 1440", HeartbeatInterval{Minutes: 1440}},
		{"suppress section", "HEARTBEAT_SUPPRESS_SECTION: TRADING", HeartbeatSuppressSection{Section: "TRADING"}},
		{"unsuppress section", "HEARTBEAT_UNSUPPRESS_SECTION: TRADING", HeartbeatUnsuppressSection{Section: "TRADING"}},
		{"heartbeat ok", "HEARTBEAT_OK", HeartbeatOK{}},
		{"heartbeat ok bold", "**HEARTBEAT_OK**", HeartbeatOK{}},
		{"heartbeat ok underscores", "__HEARTBEAT_OK__", HeartbeatOK{}},
		{"heartbeat ok code", "`HEARTBEAT_OK`", HeartbeatOK{}},
		{"limitation", "LIMITATION: No email | I cannot read email | Add an IMAP skill", Limitation{Title: "No email", Description: "I cannot read email", Plan: "Add an IMAP skill"}},
		{"limitation no plan", "LIMITATION: No email | I cannot read email", Limitation{Title: "No email", Description: "I cannot read email"}},
		{"self heal", "SELF_HEAL: scheduler skips tasks | run omega tasks and check due ones fire", SelfHeal{Description: "scheduler skips tasks", Verification: "run omega tasks and check due ones fire"}},
		{"self heal pipes in verification", "SELF_HEAL: grep broken | echo a | grep a", SelfHeal{Description: "grep broken", Verification: "echo a | grep a"}},
		{"self heal resolved", "SELF_HEAL_RESOLVED", SelfHealResolved{}},
		{"bug report", "BUG_REPORT: photos arrive twice", BugReport{Description: "photos arrive twice"}},
		{"skill improve", "SKILL_IMPROVE: google-calendar | use RFC3339 times", SkillImprove{Skill: "google-calendar", Lesson: "use RFC3339 times"}},
		{"action outcome", "ACTION_OUTCOME: success", ActionOutcome{Outcome: "success"}},
		{"reward plus", "REWARD: +1|scheduling|straightforward reminder request", Reward{Score: 1, Domain: "scheduling", Lesson: "straightforward reminder request"}},
		{"reward zero", "REWARD: 0 | chat | neutral", Reward{Score: 0, Domain: "chat", Lesson: "neutral"}},
		{"reward minus", "REWARD: -1 | heartbeat | redundant | noisy", Reward{Score: -1, Domain: "heartbeat", Lesson: "redundant | noisy"}},
		// The marker table's form (omega-markers.md): outcome | score.
		{"reward outcome form plus", "REWARD: helped the user | +1", Reward{Score: 1, Domain: RewardDomainGeneral, Lesson: "helped the user"}},
		{"reward outcome form minus", "REWARD: reminder was redundant|-1", Reward{Score: -1, Domain: RewardDomainGeneral, Lesson: "reminder was redundant"}},
		{"reward outcome form zero", "REWARD: fine | 0", Reward{Score: 0, Domain: RewardDomainGeneral, Lesson: "fine"}},
		{"lesson", "LESSON: training|user trains Saturday mornings", Lesson{Domain: "training", Rule: "user trains Saturday mornings"}},
		{"silent", "SILENT", Silent{}},
		{"silent bold", "  **SILENT**  ", Silent{}},
		{"bold marker", "**SCHEDULE:** Call Juan | 2026-02-24T17:00:00Z | once", Schedule{Description: "Call Juan", Due: due, Repeat: RepeatOnce}},
		{"bold whole marker", "**LANG_SWITCH: French**", LangSwitch{Language: "French"}},
		{"indented", "   LANG_SWITCH: French", LangSwitch{Language: "French"}},
		{"list item", "- HEARTBEAT_ADD: water plants", HeartbeatAdd{Item: "water plants"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, form := range []struct{ name, reply, text string }{
				{"alone", tc.reply, ""},
				{"line start", "Done.\n" + tc.reply + "\nAnything else?", "Done.\nAnything else?"},
			} {
				got := Parse(form.reply)
				if len(got.Invalid) != 0 {
					t.Fatalf("%s: unexpected invalid: %+v", form.name, got.Invalid)
				}
				if want := []Marker{tc.want}; !reflect.DeepEqual(normalize(got.Markers), want) {
					t.Errorf("%s: markers = %#v, want %#v", form.name, got.Markers, want)
				}
				if got.Text != form.text {
					t.Errorf("%s: text = %q, want %q", form.name, got.Text, form.text)
				}
			}
		})
	}
}

func TestParseInline(t *testing.T) {
	due := utc(2026, 11, 23, 17, 0)
	tests := []struct {
		name  string
		reply string
		want  []Marker
		text  string
	}{
		{
			"schedule mid sentence",
			"Sure! SCHEDULE: Call Juan | 2026-11-23T17:00:00 | once",
			[]Marker{Schedule{Description: "Call Juan", Due: due, Repeat: RepeatOnce}},
			"Sure!",
		},
		{
			"two markers on one line",
			"Done. SCHEDULE: Call Juan | 2026-11-23T17:00:00Z | once REWARD: +1|scheduling|easy",
			[]Marker{Schedule{Description: "Call Juan", Due: due, Repeat: RepeatOnce}, Reward{Score: 1, Domain: "scheduling", Lesson: "easy"}},
			"Done.",
		},
		{
			"bare marker mid sentence",
			"All quiet HEARTBEAT_OK for now.",
			[]Marker{HeartbeatOK{}},
			"All quiet for now.",
		},
		{
			"bare marker before punctuation",
			"All quiet HEARTBEAT_OK.",
			[]Marker{HeartbeatOK{}},
			"All quiet.",
		},
		{
			"bare marker inside value belongs to the value",
			"LESSON: heartbeat | reply HEARTBEAT_OK when idle",
			[]Marker{Lesson{Domain: "heartbeat", Rule: "reply HEARTBEAT_OK when idle"}},
			"",
		},
		{
			"after parenthesis",
			"(LANG_SWITCH: German)",
			[]Marker{LangSwitch{Language: "German)"}},
			"(",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse(tc.reply)
			if len(got.Invalid) != 0 {
				t.Fatalf("unexpected invalid: %+v", got.Invalid)
			}
			if !reflect.DeepEqual(normalize(got.Markers), tc.want) {
				t.Errorf("markers = %#v, want %#v", got.Markers, tc.want)
			}
			if got.Text != tc.text {
				t.Errorf("text = %q, want %q", got.Text, tc.text)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name   string
		reply  string
		marker string
		reason string // substring
	}{
		{"schedule two fields", "SCHEDULE: Call Juan | 2026-02-24T17:00:00Z", NameSchedule, "got 2 field"},
		{"schedule four fields", "SCHEDULE: a | 2026-02-24T17:00:00Z | once | x", NameSchedule, "got 4 field"},
		{"schedule empty description", "SCHEDULE:  | 2026-02-24T17:00:00Z | once", NameSchedule, "empty description"},
		{"schedule empty due", "SCHEDULE: Call | | once", NameSchedule, "empty datetime"},
		{"schedule bad due", "SCHEDULE: Call | tomorrow 5pm | once", NameSchedule, "not ISO 8601"},
		{"schedule date only", "SCHEDULE: Call | 2026-02-24 | once", NameSchedule, "not ISO 8601"},
		{"schedule bad repeat", "SCHEDULE: Call | 2026-02-24T17:00:00Z | hourly", NameSchedule, "repeat \"hourly\""},
		{"schedule trailing prose", "I'll SCHEDULE: Call | 2026-02-24T17:00:00Z | once and tell you", NameSchedule, "repeat"},
		{"schedule action bad", "SCHEDULE_ACTION: Check | nope | daily", NameScheduleAction, "not ISO 8601"},
		{"cancel empty", "CANCEL_TASK:", NameCancelTask, "empty value"},
		{"update no id", "UPDATE_TASK: | x | | ", NameUpdateTask, "empty task id"},
		{"update nothing", "UPDATE_TASK: a1b2 | | | ", NameUpdateTask, "nothing to update"},
		{"update wrong fields", "UPDATE_TASK: a1b2 | due | 2026-02-24T17:00:00Z", NameUpdateTask, "got 3 field"},
		{"update bad repeat", "UPDATE_TASK: a1b2 | | | yearly", NameUpdateTask, "repeat"},
		{"lang empty", "LANG_SWITCH:   ", NameLangSwitch, "empty value"},
		{"personality empty", "PERSONALITY:", NamePersonality, "empty value"},
		{"project empty", "PROJECT_ACTIVATE:", NameProjectActivate, "empty value"},
		{"heartbeat add empty", "HEARTBEAT_ADD: ", NameHeartbeatAdd, "empty value"},
		{"heartbeat remove empty", "HEARTBEAT_REMOVE:", NameHeartbeatRemove, "empty value"},
		{"interval zero", "HEARTBEAT_INTERVAL: 0", NameHeartbeatInterval, "outside 1..1440"},
		{"interval too big", "HEARTBEAT_INTERVAL: 1441", NameHeartbeatInterval, "outside 1..1440"},
		{"interval negative", "HEARTBEAT_INTERVAL: -5", NameHeartbeatInterval, "not a whole number"},
		{"interval words", "HEARTBEAT_INTERVAL: fifteen", NameHeartbeatInterval, "not a whole number"},
		{"interval with unit", "HEARTBEAT_INTERVAL: 15 minutes", NameHeartbeatInterval, "not a whole number"},
		{"suppress empty", "HEARTBEAT_SUPPRESS_SECTION:", NameHeartbeatSuppressSection, "empty value"},
		{"unsuppress empty", "HEARTBEAT_UNSUPPRESS_SECTION:", NameHeartbeatUnsuppressSection, "empty value"},
		{"limitation title only", "LIMITATION: No email", NameLimitation, "want title | description"},
		{"limitation empty description", "LIMITATION: No email | ", NameLimitation, "empty description"},
		{"self heal old format", "SELF_HEAL: scheduler broken", NameSelfHeal, "want description | verification"},
		{"self heal no verification", "SELF_HEAL: scheduler broken |", NameSelfHeal, "empty verification"},
		{"self heal no description", "SELF_HEAL: | run tests", NameSelfHeal, "empty description"},
		{"bug empty", "BUG_REPORT:", NameBugReport, "empty value"},
		{"skill no lesson", "SKILL_IMPROVE: calendar", NameSkillImprove, "want skill | lesson"},
		{"outcome empty", "ACTION_OUTCOME:", NameActionOutcome, "empty value"},
		{"reward bad score", "REWARD: +2|chat|x", NameReward, "not -1, 0 or +1"},
		{"reward words", "REWARD: great|chat|x", NameReward, "not -1, 0 or +1"},
		{"reward outcome form bad score", "REWARD: helped the user | +5", NameReward, "not -1, 0 or +1"},
		{"reward outcome form empty outcome", "REWARD: | 1", NameReward, "empty outcome"},
		{"reward one field", "REWARD: helped the user", NameReward, "want score | domain | lesson or outcome | score"},
		{"reward two fields, no score", "REWARD: chat | helped", NameReward, "not -1, 0 or +1"},
		{"lesson no rule", "LESSON: chat |", NameLesson, "empty rule"},
		{"missing colon", "CANCEL_TASK a1b2", NameCancelTask, "missing ':'"},
		{"unknown marker", "DEPLOY_NOW: a todo app", "DEPLOY_NOW", "unknown marker"},
		{"build proposal empty", "BUILD_PROPOSAL:", NameBuildProposal, "empty value"},
		{"unknown inline", "Sure thing. MEMORY_SAVE: likes tea", "MEMORY_SAVE", "unknown marker"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Parse(tc.reply)
			if len(got.Markers) != 0 {
				t.Errorf("markers = %#v, want none", got.Markers)
			}
			if len(got.Invalid) != 1 {
				t.Fatalf("invalid = %+v, want one", got.Invalid)
			}
			inv := got.Invalid[0]
			if inv.Name != tc.marker || !strings.Contains(inv.Reason, tc.reason) {
				t.Errorf("invalid = %+v, want name %s reason containing %q", inv, tc.marker, tc.reason)
			}
			if inv.Raw == "" {
				t.Error("invalid has no raw text")
			}
			if strings.Contains(got.Text, tc.marker) {
				t.Errorf("text %q still holds %s", got.Text, tc.marker)
			}
		})
	}
}

func TestParseLeavesProseAlone(t *testing.T) {
	tests := []string{
		"NOTE: bring an umbrella.",
		"URL: https://example.com/a_b",
		"TODO: call mom",
		"Here is your schedule: Monday gym, Tuesday rest.",
		"Your Schedule: nothing today.",
		"The SCHEDULE for today is empty.",
		"Keep it SILENT please.",
		"SILENT:",
		"Set MAX_RETRIES to 3.",
		"snake_case_name: value",
		"Foo_Bar: not all caps",
		"I'll remember the LESSON learned.",
		"A_SCHEDULE_ITEM is fine",
		"```yaml\nDATABASE_URL: postgres://localhost/db\nLOG_LEVEL: debug\n```",
		"Line one\n\n\nLine two after two blank lines",
		"1. first\n2. second",
	}
	for _, reply := range tests {
		t.Run(reply, func(t *testing.T) {
			got := Parse(reply)
			if len(got.Markers) != 0 || len(got.Invalid) != 0 {
				t.Errorf("markers %#v invalid %+v, want none", got.Markers, got.Invalid)
			}
			if got.Text != reply {
				t.Errorf("text = %q, want unchanged", got.Text)
			}
		})
	}
}

func TestParseKnownMarkersInsideCodeFence(t *testing.T) {
	got := Parse("Example:\n```\nHEARTBEAT_ADD: water plants\nENV_NAME: x\n```")
	if want := []Marker{HeartbeatAdd{Item: "water plants"}}; !reflect.DeepEqual(got.Markers, want) {
		t.Errorf("markers = %#v, want %#v", got.Markers, want)
	}
	if want := "Example:\n```\nENV_NAME: x\n```"; got.Text != want {
		t.Errorf("text = %q, want %q", got.Text, want)
	}
}

func TestParseWhitespace(t *testing.T) {
	tests := []struct {
		name, reply, text string
	}{
		{"markers between paragraphs", "Hello.\n\nSCHEDULE: a | 2026-02-24T17:00:00Z | once\n\nBye.", "Hello.\n\nBye."},
		{"several markers between paragraphs", "Hello.\n\nLANG_SWITCH: Spanish\n\nHEARTBEAT_ADD: x\n\n\nBye.", "Hello.\n\nBye."},
		{"trailing markers", "Hello.\n\nREWARD: +1|chat|ok\nLESSON: chat|be brief\n", "Hello."},
		{"leading markers", "LANG_SWITCH: Spanish\n\n¡Hola!", "¡Hola!"},
		{"no trailing space inline", "Sure!   SCHEDULE: a | 2026-02-24T17:00:00Z | once\nNext", "Sure!\nNext"},
		{"crlf", "Hello.\r\nHEARTBEAT_OK\r\nBye.", "Hello.\nBye."},
		{"bullet left behind", "Plan:\n- HEARTBEAT_ADD: x\n- buy milk", "Plan:\n- buy milk"},
		{"numbered bullet left behind", "Plan:\n1. HEARTBEAT_ADD: x\n2. buy milk", "Plan:\n2. buy milk"},
		{"only markers", "HEARTBEAT_OK\nREWARD: 0|heartbeat|quiet", ""},
		{"silent with markers", "SILENT\nREWARD: 0|group|not addressed", ""},
		{"indentation kept", "Code:\n    x := 1\nHEARTBEAT_OK", "Code:\n    x := 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.reply).Text; got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestParseOrder(t *testing.T) {
	reply := "HEARTBEAT_INTERVAL: 30\nOK then PURGE_FACTS done.\nHEARTBEAT_ADD: stretch\nSCHEDULE: x | 2026-02-24T17:00:00Z | once LANG_SWITCH: Greek\nHEARTBEAT_REMOVE: coffee"
	res := Parse(reply)
	var names []string
	for _, m := range res.Markers {
		names = append(names, m.Name())
	}
	want := []string{NameHeartbeatInterval, NamePurgeFacts, NameHeartbeatAdd, NameSchedule, NameLangSwitch, NameHeartbeatRemove}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if res.Text != "OK then done." {
		t.Errorf("text = %q", res.Text)
	}
}

func TestParseInLocation(t *testing.T) {
	lisbon := time.FixedZone("WEST", 3600)
	tests := []struct {
		loc  *time.Location
		due  string
		want time.Time
	}{
		{lisbon, "2026-06-01T17:00:00", time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC)},
		{lisbon, "2026-06-01T17:00:00Z", time.Date(2026, 6, 1, 17, 0, 0, 0, time.UTC)},
		{lisbon, "2026-06-01T17:00:00-03:00", time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC)},
		{nil, "2026-06-01T17:00:00", time.Date(2026, 6, 1, 17, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.loc, tc.due), func(t *testing.T) {
			res := ParseIn("SCHEDULE: x | "+tc.due+" | once", tc.loc)
			if len(res.Markers) != 1 {
				t.Fatalf("markers = %#v, invalid %+v", res.Markers, res.Invalid)
			}
			if got := res.Markers[0].(Schedule).Due; !got.Equal(tc.want) {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNamesAreAllRecognised(t *testing.T) {
	for _, n := range Names() {
		if n == NameSilent {
			continue
		}
		if kindOf(n) == unknownName {
			t.Errorf("%s is listed but not recognised", n)
		}
	}
}
