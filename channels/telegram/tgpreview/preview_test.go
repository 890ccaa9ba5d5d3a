package tgpreview

import (
	"strings"
	"testing"
)

func TestNewRequiresItsCollaborators(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without collaborators: want error")
	}
}

// A preview holds back an unclosed bold, shows the final reply's first
// message and, once that is full, stops changing.
func TestChunk(t *testing.T) {
	if html, full := Chunk("so **bold** and **open"); html != "so <b>bold</b> and" || full {
		t.Errorf("Chunk of a reply with an unclosed bold = %q, full %v", html, full)
	}
	long := strings.Repeat("word ", 2000)
	html, full := Chunk(long)
	if !full || len(html) > 4096 || !strings.HasPrefix(long, strings.TrimSpace(html)) {
		t.Errorf("Chunk of a long reply: %d bytes, full %v", len(html), full)
	}
}
