package waformat

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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

func TestChunk(t *testing.T) {
	para := func(n int, r string) string { return strings.Repeat(r, n) }
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"empty", "  \n ", 100, nil},
		{"fits", "hello\n\nworld", 100, []string{"hello\n\nworld"}},
		{"paragraph boundary", para(40, "a") + "\n\n" + para(40, "b"), 60,
			[]string{para(40, "a"), para(40, "b")}},
		{"packs paragraphs", "a\n\nb\n\nc", 16 + 7, []string{"a\n\nb\n\nc"}},
		{"line boundary in a long paragraph", para(30, "a") + "\n" + para(30, "b"), 50,
			[]string{para(30, "a"), para(30, "b")}},
		{"word boundary", "aaaa bbbb cccc", 16 + 9, []string{"aaaa bbbb", "cccc"}},
		{"hard split", para(12, "é"), 16 + 5, []string{"ééééé", "ééééé", "éé"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Chunk(tt.in, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Chunk = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

func TestChunkSplitsCodeBlockCleanly(t *testing.T) {
	var b strings.Builder
	b.WriteString("intro\n\n```\n")
	for i := range 200 {
		b.WriteString(strings.Repeat("x", 30) + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("```\n\noutro")
	chunks := Chunk(b.String(), 1000)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > 1000 {
			t.Errorf("chunk %d has %d runes, limit 1000", i, n)
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %d leaves a code block open:\n%s", i, c)
		}
	}
	if !strings.HasPrefix(chunks[1], "```\n") {
		t.Errorf("chunk 1 does not reopen the code block: %q", chunks[1][:10])
	}
	if all := strings.Join(chunks, "\n"); !strings.Contains(all, "intro") || !strings.HasSuffix(all, "outro") {
		t.Error("text lost")
	}
}
