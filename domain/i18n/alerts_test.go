package i18n

import (
	"strings"
	"testing"
)

func TestEveryLanguageHasTheOwnerAlerts(t *testing.T) {
	for _, lang := range Languages() {
		for _, k := range []AlertKey{AlertBugReport, AlertLimitation} {
			texts, ok := alertTexts[lang]
			if !ok || strings.TrimSpace(texts[k]) == "" {
				t.Fatalf("%s lacks alert %d", lang, k)
			}
		}
	}
	if got := Alert(Spanish, AlertBugReport, "ana", "x"); !strings.Contains(got, "Informe de error") {
		t.Fatalf("Spanish alert = %q", got)
	}
}
