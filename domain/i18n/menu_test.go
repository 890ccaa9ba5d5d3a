package i18n

import (
	"strings"
	"testing"
)

// Every language's menu has one entry per /help line, each a command
// Telegram accepts, and hiding a command removes it from both.
func TestMenuFollowsHelp(t *testing.T) {
	for _, lang := range Languages() {
		_, lines := helpLines(lang)
		menu := Menu(lang)
		if len(menu) != len(lines) || Code(lang) == "" {
			t.Fatalf("%s: %d menu entries for %d help lines (code %q)", lang, len(menu), len(lines), Code(lang))
		}
		for _, e := range menu {
			if e.Command == "" || strings.ToLower(e.Command) != e.Command || e.Description == "" || len([]rune(e.Description)) > 256 {
				t.Errorf("%s: entry %+v", lang, e)
			}
		}
		for _, e := range Menu(lang, "whatsapp") {
			if e.Command == "whatsapp" {
				t.Errorf("%s: hidden /whatsapp in the menu", lang)
			}
		}
		if h := HelpWithout(lang, "whatsapp"); strings.Contains(h, "/whatsapp") || !strings.Contains(h, "/help") {
			t.Errorf("%s: help without /whatsapp:\n%s", lang, h)
		}
	}
}
