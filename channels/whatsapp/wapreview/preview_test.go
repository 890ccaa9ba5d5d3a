package wapreview

import "testing"

func TestCompletedParagraphs(t *testing.T) {
	tests := []struct {
		md   string
		from int
		want int
	}{
		{"one", 0, 0},
		{"one\n\ntwo", 0, 5},
		{"one\n\ntwo\n\nthr", 0, 10},
		{"one\n\ntwo\n\nthr", 5, 10},
		{"```\na\n\nb\n```\n\nc", 0, 14},
		{"```\na\n\nb", 0, 0},
	}
	for _, tt := range tests {
		if got := completedParagraphs(tt.md, tt.from); got != tt.want {
			t.Errorf("completedParagraphs(%q, %d) = %d, want %d", tt.md, tt.from, got, tt.want)
		}
	}
}

func TestNewRequiresItsCollaborators(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without collaborators: want error")
	}
}
