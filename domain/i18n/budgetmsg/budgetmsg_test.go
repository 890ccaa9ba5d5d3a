package budgetmsg

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/i18n"
)

// Every language has every budget text, with the placeholders it
// documents (a wrong verb or count shows as %!).
func TestBudgetTexts(t *testing.T) {
	args := map[Key][]any{
		Exceeded: {"tomorrow"}, Paused: {"in 5 minutes"},
		Usage: {"Today", "$1.00", "$4.00", "00:00"}, NoLimit: {"Today", "$1.00"},
		YouToday: nil, YouThisMonth: nil, AllToday: nil, AllThisMonth: nil, Spent: {30, 0.002, 2},
	}
	for _, lang := range i18n.Languages() {
		if _, ok := budgetTexts[lang]; !ok {
			t.Errorf("%s has no budget texts", lang)
		}
		for k, a := range args {
			if s := Text(lang, k, a...); s == "" || strings.Contains(s, "%!") {
				t.Errorf("%s key %d: %q", lang, k, s)
			}
		}
	}
	if got := Text("Klingon", NoLimit, "Today", "$1.00"); got != "Today: spent $1.00, no limit" {
		t.Errorf("an unknown language: %q", got)
	}
}

// /usage's labels and the word for calls are words of each language, not
// English ones left in a translation.
func TestUsageWordsAreTranslated(t *testing.T) {
	for _, lang := range i18n.Languages() {
		if lang == i18n.English {
			continue
		}
		for _, k := range []Key{YouToday, YouThisMonth, AllToday, AllThisMonth, Spent} {
			if got, en := Text(lang, k, 1, 0.5, 2), Text(i18n.English, k, 1, 0.5, 2); got == en {
				t.Errorf("%s key %d is the English %q", lang, k, en)
			}
		}
	}
}
