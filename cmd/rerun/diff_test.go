package rerun

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// A two-character change in a long system prompt shows as the one line
// it touches with a few lines around it, and is named a prompt change; a
// different reply is named a reply change.
func TestCompareShowsTheChangedLines(t *testing.T) {
	var prompt []string
	for i := range 200 {
		prompt = append(prompt, fmt.Sprintf("Rule %d: be helpful and brief.", i))
	}
	changed := slices.Clone(prompt)
	changed[100] = "Rule 100: be helpful and BRIEF!"
	tn := func(system, reply string) []string {
		return normalize([]domain.Event{
			event(t, turn.MessageReceived{Channel: "telegram", SenderID: "42", Text: "hi"}),
			{Type: "ContextBuilt", Data: []byte(fmt.Sprintf(`{"system":%q}`, system))},
			event(t, turn.ReplyReady{Text: reply}),
		})
	}
	recorded := tn(strings.Join(prompt, "\n"), "hello")
	diff, kinds := compare(recorded, tn(strings.Join(changed, "\n"), "hello"))
	text := strings.Join(diff, "\n")
	if len(diff) > 12 || !strings.Contains(text, "-    Rule 100: be helpful and brief.") || !strings.Contains(text, "+    Rule 100: be helpful and BRIEF!") {
		t.Fatalf("diff of a two-character change (%d lines):\n%s", len(diff), text)
	}
	if strings.Contains(text, "Rule 90:") || !strings.HasPrefix(text, "--- recorded\n+++ re-run\n@@ -") {
		t.Fatalf("not a unified diff of the changed lines:\n%s", text)
	}
	if !slices.Equal(kinds, []string{"prompt"}) {
		t.Fatalf("changed %q, want prompt", kinds)
	}
	if _, kinds := compare(recorded, tn(strings.Join(prompt, "\n"), "bye")); !slices.Equal(kinds, []string{"reply"}) {
		t.Fatalf("changed %q, want reply", kinds)
	}
	if diff, kinds := compare(recorded, recorded); diff != nil || kinds != nil {
		t.Fatalf("the same events differ: %q %q", diff, kinds)
	}
}
