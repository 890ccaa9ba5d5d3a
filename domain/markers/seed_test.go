package markers

import (
	"reflect"
	"testing"
)

// The tests below mirror the marker-related tests named in the gateway
// seed's "Tests" section (test_extract_heartbeat_*, test_*self_heal*,
// test_parse_plan_response_*), expressed against Parse and ParsePlan.

// only keeps the markers of type T.
func only[T Marker](ms []Marker) []T {
	var out []T
	for _, m := range ms {
		if v, ok := m.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestSeedExtractHeartbeat(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  []Marker
	}{
		{"add", "Sure, I'll monitor that.\nHEARTBEAT_ADD: Check exercise habits", []Marker{HeartbeatAdd{Item: "Check exercise habits"}}},
		{"remove", "Done.\nHEARTBEAT_REMOVE: exercise", []Marker{HeartbeatRemove{Item: "exercise"}}},
		{"multiple", "Updated.\nHEARTBEAT_ADD: Water plants\nHEARTBEAT_REMOVE: old task", []Marker{HeartbeatAdd{Item: "Water plants"}, HeartbeatRemove{Item: "old task"}}},
		{"empty ignored", "HEARTBEAT_ADD: \nHEARTBEAT_REMOVE:   \nText", nil},
		{"interval", "HEARTBEAT_INTERVAL: 15", []Marker{HeartbeatInterval{Minutes: 15}}},
		{"interval boundaries", "HEARTBEAT_INTERVAL: 1\nHEARTBEAT_INTERVAL: 1440", []Marker{HeartbeatInterval{Minutes: 1}, HeartbeatInterval{Minutes: 1440}}},
		{"interval invalid", "HEARTBEAT_INTERVAL: 0\nHEARTBEAT_INTERVAL: -5\nHEARTBEAT_INTERVAL: abc\nHEARTBEAT_INTERVAL: 1441", nil},
		{"mixed in order", "HEARTBEAT_INTERVAL: 30\nHEARTBEAT_ADD: New item\nHEARTBEAT_REMOVE: Old item", []Marker{HeartbeatInterval{Minutes: 30}, HeartbeatAdd{Item: "New item"}, HeartbeatRemove{Item: "Old item"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.reply).Markers; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("markers = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestSeedStripHeartbeat(t *testing.T) {
	tests := []struct{ name, reply, text string }{
		{"add", "I'll keep an eye on it.\nHEARTBEAT_ADD: Check exercise\nAnything else?", "I'll keep an eye on it.\nAnything else?"},
		{"both types", "Done.\nHEARTBEAT_ADD: New\nHEARTBEAT_REMOVE: Old\nBye.", "Done.\nBye."},
		{"interval", "Updated.\nHEARTBEAT_INTERVAL: 15\nBye.", "Updated.\nBye."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.reply).Text; got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestSeedSelfHeal(t *testing.T) {
	t.Run("extract", func(t *testing.T) {
		got := only[SelfHeal](Parse("I found a bug.\nSELF_HEAL: build fails | run cargo build\nMore text").Markers)
		want := []SelfHeal{{Description: "build fails", Verification: "run cargo build"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
	})
	t.Run("extract none", func(t *testing.T) {
		if got := Parse("Everything is fine.").Markers; len(got) != 0 {
			t.Errorf("got %#v", got)
		}
	})
	t.Run("first wins order", func(t *testing.T) {
		got := only[SelfHeal](Parse("SELF_HEAL: a | b\nSELF_HEAL: c | d").Markers)
		if len(got) != 2 || got[0].Description != "a" {
			t.Errorf("got %#v, want a then c", got)
		}
	})
	for _, bad := range []string{"SELF_HEAL:", "SELF_HEAL:   ", "SELF_HEAL: desc only", "SELF_HEAL: desc |", "SELF_HEAL: | verification"} {
		t.Run("rejects "+bad, func(t *testing.T) {
			res := Parse(bad)
			if len(res.Markers) != 0 || len(res.Invalid) != 1 {
				t.Errorf("markers %#v invalid %+v, want one invalid", res.Markers, res.Invalid)
			}
		})
	}
	t.Run("internal pipes", func(t *testing.T) {
		got := only[SelfHeal](Parse("SELF_HEAL: grep broken | echo 'a|b' | grep -c '|'").Markers)
		if len(got) != 1 || got[0].Verification != "echo 'a|b' | grep -c '|'" {
			t.Errorf("got %#v", got)
		}
	})
	t.Run("resolved", func(t *testing.T) {
		if got := only[SelfHealResolved](Parse("Fixed it.\nSELF_HEAL_RESOLVED").Markers); len(got) != 1 {
			t.Errorf("got %#v", got)
		}
		if got := only[SelfHealResolved](Parse("Still working.").Markers); len(got) != 0 {
			t.Errorf("got %#v", got)
		}
	})
	strips := []struct{ name, reply, text string }{
		{"strip heal", "Found it.\nSELF_HEAL: x | y\nWorking.", "Found it.\nWorking."},
		{"strip resolved", "Fixed.\nSELF_HEAL_RESOLVED\nAll good.", "Fixed.\nAll good."},
		{"strip both", "A\nSELF_HEAL: x | y\nB\nSELF_HEAL_RESOLVED\nC", "A\nB\nC"},
	}
	for _, tc := range strips {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse(tc.reply).Text; got != tc.text {
				t.Errorf("text = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestSeedParsePlan(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"direct", "DIRECT", nil},
		{"direct lower", "direct", nil},
		{"direct decorated", "**Direct.**", nil},
		{"direct with reason", "DIRECT - a single question", nil},
		{"direct on own line", "Thinking about it...\nDIRECT", nil},
		{"numbered list", "1. Search flights\n2. Compare prices\n3. Book the cheapest", []string{"Search flights", "Compare prices", "Book the cheapest"}},
		{"parenthesis numbering", "1) Read file\n2) Summarise it", []string{"Read file", "Summarise it"}},
		{"single step", "1. Just do it", nil},
		{"with preamble", "Here is the plan:\n\n1. Fetch data\n2. Analyze data\n3. Write report", []string{"Fetch data", "Analyze data", "Write report"}},
		{"direct inside a step", "1. Send a direct message to Ana\n2. Wait for her reply", []string{"Send a direct message to Ana", "Wait for her reply"}},
		{"unparseable", "I am not sure what you mean.", nil},
		{"empty", "", nil},
		{"number without text", "1.\n2.", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParsePlan(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParsePlan = %#v, want %#v", got, tc.want)
			}
		})
	}
}
