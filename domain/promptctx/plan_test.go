package promptctx_test

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/turn"
)

func TestClassificationContext(t *testing.T) {
	long := strings.Repeat("é", 100)
	history := []turn.HistoryMessage{
		{Role: "user", Text: "first"}, {Role: "assistant", Text: "second"},
		{Role: "user", Text: "third\nline"}, {Role: "assistant", Text: long},
	}
	tests := []struct {
		name    string
		project string
		history []turn.HistoryMessage
		skills  []string
		want    string
	}{
		{"empty", "", nil, nil, ""},
		{"project", "trading", nil, nil, "Active project: trading"},
		{"last three messages, cut to 80 characters", "", history, nil,
			"Recent conversation:\n- assistant: second\n- user: third line\n- assistant: " + strings.Repeat("é", 80) + "…"},
		{"everything", "p", history[:1], []string{"gog", "playwright"},
			"Active project: p\nRecent conversation:\n- user: first\nAvailable skills: gog, playwright"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := promptctx.ClassificationContext(tt.project, tt.history, tt.skills); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := promptctx.ClassificationPrompt("do it", ""); !strings.HasSuffix(got, "\n\nRequest: do it") || strings.Contains(got, "\n\n\n") {
		t.Errorf("prompt without context = %q", got)
	}
}
