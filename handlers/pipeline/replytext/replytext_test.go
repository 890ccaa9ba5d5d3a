package replytext

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

func TestErrorClassKey(t *testing.T) {
	if got := errorClassKey(providers.RateLimited.String()); got != i18n.ErrRateLimited {
		t.Errorf("rate limited words as %v", got)
	}
	if got := errorKey(nil); got != i18n.ErrUnknown {
		t.Errorf("no failure words as %v", got)
	}
}

func TestForTheReplyAndTheCommand(t *testing.T) {
	ready := &turn.Turn{}
	ready.Apply(turn.ReplyReady{Text: "hello"}, 1, ready.StartedAt)
	if got := For(ready, "English", nil); got != "hello" {
		t.Errorf("For = %q, want the ready reply", got)
	}
}

func TestPlanAnnounceNumbersTheSteps(t *testing.T) {
	got := PlanAnnounce("English", []string{"look", "fix"})
	if !strings.Contains(got, "1. look") || !strings.Contains(got, "2. fix") {
		t.Fatalf("announcement %q lacks the numbered steps", got)
	}
}
