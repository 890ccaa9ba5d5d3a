package prompts

import (
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/promptctx"
)

// The default sections must carry the names promptctx gates on.
func TestDefaultsWithPromptctx(t *testing.T) {
	in := promptctx.Input{
		Prompts:        Defaults().Sections(),
		FirstInSession: true,
		Now:            time.Date(2026, 2, 23, 14, 30, 0, 0, time.UTC),
	}
	in.Message = "hello"
	hello := promptctx.Build(in)
	in.Message = "remind me tomorrow at 9"
	remind := promptctx.Build(in)
	if strings.Contains(hello.System, "SCHEDULE:") && !strings.Contains(Defaults().Section("System"), "SCHEDULE:") {
		t.Error("hello must not be taught the SCHEDULE marker")
	}
	if !strings.Contains(remind.System, "SCHEDULE: <description> | <ISO 8601 datetime> | <repeat>") {
		t.Error("a reminder request must be taught the SCHEDULE marker")
	}
	if len(hello.System) >= len(remind.System) {
		t.Errorf("hello prompt (%d bytes) should be smaller than the scheduling one (%d)", len(hello.System), len(remind.System))
	}
	t.Logf("system prompt: hello %d bytes, reminder %d bytes", len(hello.System), len(remind.System))
}
