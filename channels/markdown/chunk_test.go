package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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
