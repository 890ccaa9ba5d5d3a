package buildmsg

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/i18n"
)

// Every language has every build text, with the placeholders it
// documents (a wrong verb or count shows as %!).
func TestBuildTexts(t *testing.T) {
	args := map[Key][]any{
		PhaseOther: {"lint", 2, 9}, Starting: {"x-1", 7, 17}, Done: {"x-1", "sum"},
		Failed: {"x-1", "qa", "why"}, Escalated: {"x-1", "qa", 3}, Cancelled: {"x-1"},
		Confirm: {"a tool"}, Declined: nil,
	}
	for _, lang := range i18n.Languages() {
		if _, ok := buildTexts[lang]; !ok {
			t.Errorf("%s has no build texts", lang)
		}
		if _, ok := buildPhaseTexts[lang]; !ok {
			t.Errorf("%s has no build phase texts", lang)
		}
		for k, a := range args {
			if s := Text(lang, k, a...); strings.Contains(s, "%!") || s == "" {
				t.Errorf("%s key %d: %q", lang, k, s)
			}
		}
		if s := Phase(lang, "qa", 4, 7); s == "" || strings.Contains(s, "%!") {
			t.Errorf("%s qa phase: %q", lang, s)
		}
	}
	if got := Phase(i18n.Spanish, "lint", 1, 9); got != "⚙️ Fase 2 de 9: lint…" {
		t.Errorf("an unknown phase: %q", got)
	}
}
