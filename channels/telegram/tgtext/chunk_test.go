package tgtext

import (
	"strings"
	"testing"
)

// balanced reports whether every tag opened in s is closed in order.
func balanced(t *testing.T, s string) {
	t.Helper()
	var stack []string
	for _, tok := range tokenize(s) {
		switch tok.kind {
		case tokOpen:
			stack = append(stack, tok.name)
		case tokClose:
			if len(stack) == 0 || stack[len(stack)-1] != tok.name {
				t.Fatalf("chunk has unmatched </%s>: %.200q", tok.name, s)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		t.Fatalf("chunk leaves %v open: %.200q", stack, s)
	}
}

func squash(s string) string { return strings.Join(strings.Fields(HTMLToPlain(s)), "") }

func TestChunkHTMLLongReply(t *testing.T) {
	var md strings.Builder
	for i := 0; md.Len() < 10_000; i++ {
		md.WriteString("Paragraph with **bold** & <angles> and an emoji 👋 number ")
		md.WriteString(strings.Repeat("x", i%7))
		md.WriteString(".\n")
		if i%20 == 0 {
			md.WriteString("```go\nfunc f() { return a < b }\n```\n")
		}
	}
	html := MarkdownToHTML(md.String())
	chunks := Chunk(html, MaxMessageLen)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks for %d units, want >= 3", len(chunks), UTF16Len(html))
	}
	var joined strings.Builder
	for i, c := range chunks {
		if n := UTF16Len(c); n > MaxMessageLen {
			t.Errorf("chunk %d has %d UTF-16 units", i, n)
		}
		balanced(t, c)
		if strings.Count(c, "<pre>") != strings.Count(c, "</pre>") {
			t.Errorf("chunk %d splits a code block", i)
		}
		joined.WriteString(c)
	}
	if squash(joined.String()) != squash(html) {
		t.Error("chunks do not add up to the original text")
	}
}

func TestChunkHTMLHugeCodeBlockIsReopened(t *testing.T) {
	code := strings.Repeat("line := a < b // comment\n", 400) // ~10k characters
	html := MarkdownToHTML("intro\n```go\n" + code + "```\noutro")
	chunks := Chunk(html, MaxMessageLen)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want >= 3", len(chunks))
	}
	for i, c := range chunks {
		balanced(t, c)
		if UTF16Len(c) > MaxMessageLen {
			t.Errorf("chunk %d too long", i)
		}
		if strings.Contains(c, "line :=") && !strings.Contains(c, `<pre><code class="language-go">`) {
			t.Errorf("chunk %d has code outside a reopened block: %.80q", i, c)
		}
		if strings.Contains(c, "&lt") && strings.Count(c, "&lt;") != strings.Count(c, "&lt") {
			t.Errorf("chunk %d splits an entity", i)
		}
	}
	if squash(strings.Join(chunks, "")) != squash(html) {
		t.Error("chunks do not add up to the original text")
	}
}

func TestChunkHTMLKeepsFittingCodeBlockWhole(t *testing.T) {
	para := strings.Repeat("word ", 700) // 3500 units
	code := strings.Repeat("x = 1\n", 200)
	html := MarkdownToHTML(para + "\n```\n" + code + "```")
	chunks := Chunk(html, MaxMessageLen)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	if strings.Contains(chunks[0], "<pre>") || !strings.HasPrefix(chunks[1], "<pre>") {
		t.Errorf("code block was split: first chunk ends %q", chunks[0][len(chunks[0])-40:])
	}
}

func TestChunkHTMLCountsUTF16(t *testing.T) {
	html := strings.Repeat("😀", 3000) // 6000 UTF-16 units, 3000 runes
	chunks := Chunk(html, MaxMessageLen)
	if len(chunks) != 2 {
		t.Fatalf("got %d chunks, want 2", len(chunks))
	}
	if UTF16Len(chunks[0]) != MaxMessageLen {
		t.Errorf("first chunk %d units, want %d", UTF16Len(chunks[0]), MaxMessageLen)
	}
}

func TestChunkHTMLShort(t *testing.T) {
	if got := Chunk("<b>hi</b>", MaxMessageLen); len(got) != 1 || got[0] != "<b>hi</b>" {
		t.Errorf("got %q", got)
	}
	if got := Chunk("  \n", MaxMessageLen); len(got) != 0 {
		t.Errorf("blank text gave chunks %q", got)
	}
}

func BenchmarkConvertAndChunk10k(b *testing.B) {
	md := strings.Repeat("Some **bold** text with `code` & <tags> and [a link](https://go.dev).\n", 140)
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		Chunk(MarkdownToHTML(md), MaxMessageLen)
	}
}
