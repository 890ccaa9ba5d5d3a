package markers

import (
	"regexp"
	"strings"
	"testing"
)

// leaks finds protocol text in s independently of the parser's scanner: a
// known name standing as a word (optionally wrapped in '_'), followed by
// ':' or, for bare markers, by anything but a word character.
func leaks(s string) []string {
	var found []string
	if isSilentLineAnywhere(s) {
		found = append(found, NameSilent)
	}
	for name, re := range leakPatterns {
		if re.MatchString(s) {
			found = append(found, name)
		}
	}
	return found
}

var leakPatterns = func() map[string]*regexp.Regexp {
	m := make(map[string]*regexp.Regexp)
	for _, name := range Names() {
		switch kindOf(name) {
		case valued:
			m[name] = regexp.MustCompile(`(?m)(?:^|[^A-Za-z0-9_])_*` + name + `_*:`)
		case bare:
			m[name] = regexp.MustCompile(`(?m)(?:^|[^A-Za-z0-9_])_*` + name + `_*(?:[^A-Za-z0-9_]|$)`)
		}
	}
	return m
}()

func isSilentLineAnywhere(s string) bool {
	for line := range strings.SplitSeq(s, "\n") {
		if isSilentLine(line) {
			return true
		}
	}
	return false
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"I'll set that up for you — a reminder to call Juan tomorrow at 5pm.\n\nSCHEDULE: Call Juan | 2026-02-24T17:00:00Z | once\nREWARD: +1|scheduling|straightforward reminder request",
		"Sure! SCHEDULE: Call Juan | 2026-11-23T17:00:00 | once",
		"HEARTBEAT_OK",
		"**HEARTBEAT_OK**",
		"Your training reminder: go run today!\n\nHEARTBEAT_OK",
		"SILENT",
		"Entendido, a partir de ahora hablaré en español.\nLANG_SWITCH: Spanish",
		"Project switched.\nPROJECT_ACTIVATE: omega-trader",
		"PROJECT_DEACTIVATE\nBack to general mode.",
		"Done: UPDATE_TASK: a1b2 | | 2026-03-01T09:00:00Z | daily\nCANCEL_TASK: e5f6",
		"I can't do that yet.\nLIMITATION: No email access | I cannot read your inbox | Build an IMAP skill",
		"SELF_HEAL: scheduler drops tasks | run `omega tasks` and check | grep due\nSELF_HEAL_RESOLVED",
		"HEARTBEAT_INTERVAL: 60\nHEARTBEAT_SUPPRESS_SECTION: TRADING\nHEARTBEAT_UNSUPPRESS_SECTION: HEALTH",
		"SKILL_IMPROVE: calendar | use ISO dates\nLESSON: calendar|confirm timezone\nBUG_REPORT: photos sent twice\nACTION_OUTCOME: success",
		"Scanning now WHATSAPP_QR\nFORGET_CONVERSATION\nPURGE_FACTS:",
		"BUILD_PROPOSAL: a todo app\nNOTE: this stays",
		"```\nENV_VAR: 1\nHEARTBEAT_ADD: water\n```\nDone",
		"- HEARTBEAT_ADD: x\n1. LESSON: a|b\n> REWARD: 0|c|d",
		"Here is the plan:\n1. Fetch\n2. Analyze",
		"__SCHEDULE__: x | 2026-01-01T00:00:00Z | once",
		"SILENT HEARTBEAT_OK",
		"SCHEDULE :x HEARTBEAT_OK",
		"a\r\n\r\nHEARTBEAT_OK\r\n\r\nb",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		first := Parse(reply)
		if l := leaks(first.Text); len(l) > 0 {
			t.Fatalf("Parse(%q).Text = %q leaks %v", reply, first.Text, l)
		}
		second := Parse(first.Text)
		if second.Text != first.Text {
			t.Fatalf("not idempotent:\ninput  %q\nfirst  %q\nsecond %q", reply, first.Text, second.Text)
		}
		if len(second.Markers) != 0 || len(second.Invalid) != 0 {
			t.Fatalf("stripped text %q still yields markers %#v invalid %+v", first.Text, second.Markers, second.Invalid)
		}
		checkNeutralized(t, reply)
	})
}

// checkNeutralized asserts that neutralised text never parses as a marker
// and differs from the input only by the inserted word joiners.
func checkNeutralized(t *testing.T, input string) {
	t.Helper()
	n := Neutralize(input)
	if res := Parse(n); len(res.Markers) != 0 || len(res.Invalid) != 0 {
		t.Fatalf("Neutralize(%q) = %q still yields markers %#v invalid %+v", input, n, res.Markers, res.Invalid)
	}
	if l := leaks(n); len(l) > 0 {
		t.Fatalf("Neutralize(%q) = %q leaks %v", input, n, l)
	}
	if strings.ReplaceAll(n, wordJoiner, "") != strings.ReplaceAll(input, wordJoiner, "") {
		t.Fatalf("Neutralize(%q) = %q changed more than word joiners", input, n)
	}
	if Neutralize(n) != n {
		t.Fatalf("Neutralize is not idempotent on %q", input)
	}
}

// TestLeaks proves the fuzz oracle can fail.
func TestLeaks(t *testing.T) {
	tests := []struct {
		text string
		leak bool
	}{
		{"x SCHEDULE: a", true},
		{"**HEARTBEAT_OK**", true},
		{"ok\nSILENT\n", true},
		{"__LESSON__: a|b", true},
		{"MY_SCHEDULE: a", false},
		{"HEARTBEAT_OKAY", false},
		{"Schedule: a", false},
		{"the SCHEDULE today", false},
	}
	for _, tc := range tests {
		if got := len(leaks(tc.text)) > 0; got != tc.leak {
			t.Errorf("leaks(%q) = %v, want %v", tc.text, got, tc.leak)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	reply := "I'll set that up for you — a reminder to call Juan tomorrow at 5pm.\n\n" +
		"SCHEDULE: Call Juan | 2026-02-24T17:00:00Z | once\n" +
		"REWARD: +1|scheduling|straightforward reminder request\n" +
		"Anything else? NOTE: the CLI uses UTC."
	for b.Loop() {
		Parse(reply)
	}
}
