package waformat

import "testing"

func TestToWhatsApp(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold stars", "this is **important**", "this is *important*"},
		{"bold underscores", "this is __important__", "this is *important*"},
		{"italic star", "an *aside* here", "an _aside_ here"},
		{"italic underscore kept", "an _aside_ here", "an _aside_ here"},
		{"two italics", "*a* and *b*", "_a_ and _b_"},
		{"bold and italic", "**bold** and *it*", "*bold* and _it_"},
		{"strike", "~~gone~~", "~gone~"},
		{"header", "## Plan for **today**", "*Plan for today*"},
		{"bullet dash", "- one\n- two", "• one\n• two"},
		{"bullet star not italic", "* one", "• one"},
		{"nested bullet", "- top\n  - deep", "• top\n  • deep"},
		{"link", "see [the docs](https://example.com/a_b)", "see the docs (https://example.com/a_b)"},
		{"bare url keeps underscores", "go to https://x.example/a_b_c now", "go to https://x.example/a_b_c now"},
		{"link text equals url", "[https://x.example](https://x.example)", "https://x.example"},
		{"inline code untouched", "run `rm **x**` now", "run `rm **x**` now"},
		{"snake_case untouched", "use my_var_name", "use my_var_name"},
		{"multiplication untouched", "2 * 3 * 4", "2 * 3 * 4"},
		{
			"code fence kept, language dropped, content untouched",
			"```go\nx := **p**\n# not a header\n```",
			"```\nx := **p**\n# not a header\n```",
		},
		{
			"table",
			"| Name | Age |\n|------|----:|\n| Ann | 30 |\n| Bob | **41** |",
			"*Name — Age*\n• Ann — 30\n• Bob — *41*",
		},
		{"pipes without a delimiter row are text", "| a | b |\n| c | d |", "| a | b |\n| c | d |"},
		{"rule", "above\n\n---\n\nbelow", "above\n\n──────────\n\nbelow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ToWhatsApp(tt.in); got != tt.want {
				t.Errorf("ToWhatsApp(%q)\n got  %q\n want %q", tt.in, got, tt.want)
			}
		})
	}
}
