package discord

import (
	"strings"
	"testing"
)

func TestToDiscord(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"**bold** and *it* and ~~gone~~", "**bold** and *it* and ~~gone~~"},
		{"5 * 3 = 15 and snake_case", `5 \* 3 = 15 and snake\_case`},
		{"# Title\n\ntext", "**Title**\n\ntext"},
		{"see [docs](https://x.test/a) or https://x.test", "see [docs](https://x.test/a) or https://x.test"},
		{"```go\nfmt.Println(1)\n```", "```go\nfmt.Println(1)\n```"},
		{"> quoted\n> twice", "> quoted\n> twice"},
		{"- a\n- b", "- a\n- b"},
		{"| k | v |\n|---|---|\n| a | 1 |", "```\nk | v\n--+--\na | 1\n```"},
	} {
		if got := ToDiscord(tc.md); got != tc.want {
			t.Errorf("ToDiscord(%q) = %q, want %q", tc.md, got, tc.want)
		}
	}
}

func TestChunkKeepsCodeBlocksWhole(t *testing.T) {
	var code strings.Builder
	for i := range 200 {
		code.WriteString("line " + strings.Repeat("x", i%30) + "\n")
	}
	text := "Intro paragraph.\n\n```python\n" + code.String() + "```\n\nOutro."
	chunks := Chunk(text, MaxMessageLen)
	if len(chunks) < 2 {
		t.Fatalf("%d chunks for %d bytes", len(chunks), len(text))
	}
	for i, c := range chunks {
		if len(c) > MaxMessageLen {
			t.Errorf("chunk %d: %d bytes", i, len(c))
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %d leaves a code block open:\n%s", i, c)
		}
		if i > 0 && i < len(chunks)-1 && !strings.HasPrefix(c, "```python\n") {
			t.Errorf("chunk %d does not reopen the python block: %.40q", i, c)
		}
	}
	if !strings.HasPrefix(chunks[0], "Intro paragraph.") || !strings.HasSuffix(chunks[len(chunks)-1], "Outro.") {
		t.Errorf("first %.30q, last ends %q", chunks[0], chunks[len(chunks)-1][len(chunks[len(chunks)-1])-10:])
	}
}

func TestChunkCutsParagraphsFirst(t *testing.T) {
	a, b := strings.Repeat("a", 1500), strings.Repeat("b", 1500)
	chunks := Chunk(a+"\n\n"+b, MaxMessageLen)
	if len(chunks) != 2 || chunks[0] != a || chunks[1] != b {
		t.Fatalf("got %d chunks", len(chunks))
	}
	long := strings.Repeat("é", 3000) // one 6000-byte word
	for _, c := range Chunk(long, MaxMessageLen) {
		if len(c) > MaxMessageLen || !strings.HasPrefix(c, "é") {
			t.Fatalf("hard cut broke a character or the limit: %d bytes", len(c))
		}
	}
}
