package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers/providertest"
)

// TestChatPrintsAStreamedReplyOnce: omega chat over a pipe, with a claude
// that streams its reply word by word and a marker line in its middle,
// prints each reply whole exactly once (the preview and the final reply
// are not both printed) and never the marker.
func TestChatPrintsAStreamedReplyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	reply := "First line of the streamed answer.\nLANG_SWITCH: de\nSecond line, the last one."
	plan := providertest.StreamPlan{Every: 5 * time.Millisecond, Text: reply}
	claude := providertest.FakeClaude(t, "cat >/dev/null\n"+providertest.ClaudeStream(plan, "sess-chat"))
	bin := buildOmega(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "chat")
	cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_CLAUDE_BIN="+claude, "OMEGA_STATUS_FIRST=0s",
		"OMEGA_CLASSIFY=false", "HOME="+t.TempDir())
	// Two turns: the first also gets the welcome, the second is plain.
	cmd.Stdin = strings.NewReader("hello there\ntell me more\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("omega chat: %v\n%s", err, out.String())
	}
	got := out.String()
	if strings.Contains(got, "LANG_SWITCH") {
		t.Errorf("the marker is printed:\n%s", got)
	}
	shown := "omega> First line of the streamed answer.\nSecond line, the last one.\n"
	if c := strings.Count(got, shown); c != 2 {
		t.Errorf("the reply is printed whole %d times, want once per turn (2):\n%s", c, got)
	}
	for _, line := range []string{"First line of the streamed answer.", "Second line, the last one."} {
		if c := strings.Count(got, line); c != 2 {
			t.Errorf("%q is printed %d times, want once per turn (2):\n%s", line, c, got)
		}
	}
}
