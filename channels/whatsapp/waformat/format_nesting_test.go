package waformat

import "testing"

// The same Markdown tree as Telegram's, in WhatsApp's formatting.
func TestToWhatsAppNesting(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold inside italic", "*it **b** it*", "_it *b* it_"},
		{"italic inside strike", "~~gone *now*~~", "~gone _now_~"},
		{"code inside list items", "- run `my_cmd **x**`\n- then `cd`", "• run `my_cmd **x**`\n• then `cd`"},
		{"code fence inside a list item", "1. build:\n\n   ```sh\n   go build\n   ```\n2. run", "1. build:\n\n```\ngo build\n```\n\n2. run"},
		{"numbered list keeps its numbers", "3. three\n4. four", "3. three\n4. four"},
		{"link with parentheses", "[Go](https://en.wikipedia.org/wiki/Go_(lang))", "Go (https://en.wikipedia.org/wiki/Go_(lang))"},
		{"unclosed markers stay text", "**open *and `code", "**open *and `code"},
		{"html stays text", "<b>x</b> & <i>y</i>", "<b>x</b> & <i>y</i>"},
		{"quote", "> quoted **bold**\n> more", "> quoted *bold*\n> more"},
		{"list in a quote", "> - a\n> - b", "> • a\n> • b"},
		{"heading without inner emphasis", "# A *b* **c**", "*A b c*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ToWhatsApp(tt.in); got != tt.want {
				t.Errorf("ToWhatsApp(%q)\n got  %q\n want %q", tt.in, got, tt.want)
			}
		})
	}
}
