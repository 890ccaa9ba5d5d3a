package i18n

import (
	"strings"
	"testing"
)

// Every language has every build text, with the placeholders it
// documents (a wrong verb or count shows as %!).
func TestBuildTexts(t *testing.T) {
	args := map[BuildKey][]any{
		BuildPhaseOther: {"lint", 2, 9}, BuildStarting: {"x-1", 7, 17}, BuildDone: {"x-1", "sum"},
		BuildFailedMsg: {"x-1", "qa", "why"}, BuildEscalated: {"x-1", "qa", 3}, BuildCancelledMsg: {"x-1"},
		BuildConfirm: {"a tool"}, BuildDeclined: nil,
	}
	for _, lang := range Languages() {
		if _, ok := buildTexts[lang]; !ok {
			t.Errorf("%s has no build texts", lang)
		}
		if _, ok := buildPhaseTexts[lang]; !ok {
			t.Errorf("%s has no build phase texts", lang)
		}
		for k, a := range args {
			if s := Build(lang, k, a...); strings.Contains(s, "%!") || s == "" {
				t.Errorf("%s key %d: %q", lang, k, s)
			}
		}
		if s := BuildPhase(lang, "qa", 4, 7); s == "" || strings.Contains(s, "%!") {
			t.Errorf("%s qa phase: %q", lang, s)
		}
	}
	if got := BuildPhase(Spanish, "lint", 1, 9); got != "⚙️ Fase 2 de 9: lint…" {
		t.Errorf("an unknown phase: %q", got)
	}
}
