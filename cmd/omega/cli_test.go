package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// omega chat reads the terminal (here a pipe), runs each line as a turn on
// the embedded store and prints the replies, then exits at end of input.
func TestChatOverPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	claude, _ := crashClaude(t, t.TempDir())
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "chat")
	cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+data, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_STATUS_FIRST=0s", "OMEGA_CLASSIFY=false", "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader("hello there\nsecond line\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("omega chat: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"omega> done: hello there", "omega> done: second line"} {
		if !strings.Contains(got, want) {
			t.Fatalf("chat output lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "hello there") > strings.Index(got, "done: second line") {
		t.Fatalf("replies out of order:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(data, "omega.db")); err != nil {
		t.Fatalf("no store in the data directory: %v", err)
	}
}
