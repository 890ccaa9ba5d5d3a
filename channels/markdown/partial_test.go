package markdown

import "testing"

func TestHoldOpen(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain words", "plain words"},
		{"**bold** and **bo", "**bold** and "},
		{"a ~~gone~~ b ~~x", "a ~~gone~~ b "},
		{"run `go te", "run "},
		{"run `go test` now", "run `go test` now"},
		{"```go\nx := `raw", "```go\nx := `raw"}, // inside an open fence, backticks are code
		{"```go\nx\n```\nand `y", "```go\nx\n```\nand "},
	}
	for _, tt := range tests {
		if got := HoldOpen(tt.in); got != tt.want {
			t.Errorf("HoldOpen(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
