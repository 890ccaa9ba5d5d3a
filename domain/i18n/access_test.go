package i18n

import "testing"

// The access catalogue is complete in English and Spanish with the same
// placeholders; other languages fall back to English.
func TestAccessCatalogueComplete(t *testing.T) {
	for _, lang := range []string{English, Spanish} {
		for _, k := range AccessKeys() {
			s, ok := accessTexts[lang][k]
			if !ok {
				t.Errorf("%s lacks %s", lang, k)
				continue
			}
			if got, want := verbs(s), verbs(accessTexts[English][k]); got != want {
				t.Errorf("%s %s: placeholders %q, English has %q", lang, k, got, want)
			}
		}
		if n := len(accessTexts[lang]); n != len(AccessKeys()) {
			t.Errorf("%s: %d texts, want %d", lang, n, len(AccessKeys()))
		}
	}
	if got := AccessText(German, AccessPairNone); got != accessTexts[English][AccessPairNone] {
		t.Fatalf("German falls back to %q", got)
	}
	if got := AccessText(Spanish, AccessRevoked, "telegram:9"); got != "Revocado telegram:9: ya no tiene permiso." {
		t.Fatalf("AccessText = %q", got)
	}
}
