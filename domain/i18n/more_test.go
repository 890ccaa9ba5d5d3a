package i18n

import (
	"strings"
	"testing"
)

func TestMoreCatalogueComplete(t *testing.T) {
	for _, lang := range Languages() {
		for _, k := range MoreKeys() {
			s, ok := more[lang][k]
			if !ok {
				t.Errorf("%s lacks %s", lang, k)
				continue
			}
			if got, want := verbs(s), verbs(more[English][k]); got != want {
				t.Errorf("%s %s: placeholders %q, English has %q", lang, k, got, want)
			}
		}
	}
	if got := More("Spanish", ProjectOn, "x"); !strings.Contains(got, "Proyecto x") {
		t.Fatalf("More = %q", got)
	}
}

func verbs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s)-1; i++ {
		if s[i] == '%' {
			b.WriteByte(s[i+1])
			i++
		}
	}
	return b.String()
}

func TestTaskCatalogueComplete(t *testing.T) {
	for _, lang := range Languages() {
		for _, k := range TaskKeys() {
			s, ok := taskTexts[lang][k]
			if !ok {
				t.Errorf("%s lacks %s", lang, k)
				continue
			}
			if got, want := verbs(s), verbs(taskTexts[English][k]); got != want {
				t.Errorf("%s %s: placeholders %q, English has %q", lang, k, got, want)
			}
		}
	}
	if got := TaskText("Spanish", TaskLate, "09:00"); got != "(con retraso: era para las 09:00)" {
		t.Fatalf("TaskText = %q", got)
	}
}
