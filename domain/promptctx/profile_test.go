package promptctx

import (
	"fmt"
	"strings"
	"testing"
)

// A message that matches no keyword still carries every recorded fact.
func TestProfileWithoutKeywords(t *testing.T) {
	in := baseInput("what's my favorite color")
	in.Facts = [][2]string{{"favorite_color", "teal"}, {"timezone", "Europe/Lisbon"}}
	out := Build(in)
	if !strings.Contains(out.System, "User profile:\n- name: Daniel\n- timezone: Europe/Lisbon\n- favorite_color: teal") {
		t.Fatalf("facts missing:\n%s", out.System)
	}
}

// The profile block keeps at most MaxProfileFacts facts and
// MaxProfileBytes bytes, the language and timezone first, and says how
// many facts it left out.
func TestProfileBounded(t *testing.T) {
	t.Run("facts", func(t *testing.T) {
		in := baseInput("hello")
		in.Facts = nil
		for i := range MaxProfileFacts + 20 {
			in.Facts = append(in.Facts, [2]string{fmt.Sprintf("fact_%02d", i), "v"})
		}
		in.Facts = append(in.Facts, [2]string{"timezone", "Europe/Lisbon"})
		block := profileBlock(in)
		if got := strings.Count(block, "\n- fact_"); got != MaxProfileFacts-1 {
			t.Fatalf("%d facts shown beside the timezone, want %d:\n%s", got, MaxProfileFacts-1, block)
		}
		if !strings.Contains(block, "- timezone: Europe/Lisbon") || !strings.HasSuffix(block, "\n(21 more facts not shown)") {
			t.Fatalf("timezone dropped or omission not stated:\n%s", block)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		in := baseInput("hello")
		in.Facts = nil
		long := strings.Repeat("x", 200)
		for i := range 30 {
			in.Facts = append(in.Facts, [2]string{fmt.Sprintf("fact_%02d", i), long})
		}
		block := profileBlock(in)
		shown := strings.Count(block, "\n- fact_")
		if len(block) > MaxProfileBytes || shown == 0 || shown == 30 {
			t.Fatalf("block of %d bytes with %d of 30 facts, bound %d", len(block), shown, MaxProfileBytes)
		}
		if !strings.HasSuffix(block, fmt.Sprintf("\n(%d more facts not shown)", 30-shown)) {
			t.Fatalf("omission not stated:\n%s", block[len(block)-80:])
		}
	})
}

// In a group the session and history are shared by its members: no
// member's facts enter them, the rules and the speaker's name are on every
// turn, the resumed ones too.
func TestGroupTurnsCarryRulesNotFacts(t *testing.T) {
	in := baseInput("who am I?")
	in.IsGroup = true
	for _, first := range []bool{true, false} {
		in.FirstInSession = first
		out := Build(in)
		text := out.System
		if !first {
			text = out.Continuation
		}
		for _, want := range []string{"Group chat rules:", "This message is from Daniel, a member of this group chat."} {
			if !strings.Contains(text, want) {
				t.Errorf("first=%v: lacks %q:\n%s", first, want, text)
			}
		}
		if strings.Contains(text, "Europe/Lisbon\n") || strings.Contains(text, "Portugal") || strings.Contains(text, "User profile:") {
			t.Errorf("first=%v: a member's facts in the group's prompt:\n%s", first, text)
		}
	}
}
