package signal

import (
	"strings"
	"testing"
)

func TestMessagesStyles(t *testing.T) {
	for _, tc := range []struct {
		md, text, styles string
	}{
		{"**bold** and *it* and ~~gone~~", "bold and it and gone", "0:4:BOLD 9:2:ITALIC 16:4:STRIKETHROUGH"},
		{"🙂 **x** `y`", "🙂 x y", "3:1:BOLD 5:1:MONOSPACE"}, // the emoji is two UTF-16 units
		{"[docs](https://e.test)", "docs (https://e.test)", ""},
		{"# Head\n\n- a", "Head\n\n• a", "0:4:BOLD"},
		{"plain \uE001 marker", "plain  marker", ""},
	} {
		ms := messages(tc.md)
		if len(ms) != 1 || ms[0].text != tc.text || strings.Join(ms[0].styles, " ") != tc.styles {
			t.Errorf("messages(%q) = %+v, want %q with %q", tc.md, ms, tc.text, tc.styles)
		}
	}
}

// A span cut between two messages is styled in both.
func TestMessagesCarrySpans(t *testing.T) {
	long := "**" + strings.TrimSpace(strings.Repeat("bold words ", 300)) + "**"
	ms := messages(long)
	if len(ms) < 2 {
		t.Fatalf("%d messages", len(ms))
	}
	for i, m := range ms {
		if len([]rune(m.text)) > maxChunk || len(m.styles) != 1 || !strings.HasPrefix(m.styles[0], "0:") || !strings.HasSuffix(m.styles[0], ":BOLD") {
			t.Errorf("message %d: %d characters, styles %v", i, len([]rune(m.text)), m.styles)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:8080", Account: "+4915100000001", KeepAlive: 1, StallGrace: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"SIGNAL_URL":       func(c *Config) { c.URL = "127.0.0.1:8080" },
		"SIGNAL_ACCOUNT":   func(c *Config) { c.Account = "4915100000001" },
		"SIGNAL_KEEPALIVE": func(c *Config) { c.KeepAlive = 0 },
	} {
		c := ok
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var n Numbers
	if err := n.UnmarshalText([]byte("+49 151 1234567, 1A2B3C4D-0000-4000-8000-00000000000A")); err != nil || len(n) != 2 || n[0] != "+491511234567" || n[1] != "1a2b3c4d-0000-4000-8000-00000000000a" {
		t.Fatalf("numbers %v, %v", n, err)
	}
	if err := n.UnmarshalText([]byte("alice")); err == nil {
		t.Fatal("a name was taken for a number")
	}
}
