package main

import (
	"bytes"
	"context"
	"errors"
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

// omega doctor names what is broken and how to fix it, and fails.
func TestDoctorReportsMissingProvider(t *testing.T) {
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	t.Setenv("OMEGA_CLAUDE_BIN", filepath.Join(t.TempDir(), "no-such-claude"))
	t.Setenv("OMEGA_TELEGRAM_TOKEN", "")
	var out bytes.Buffer
	err := doctor(context.Background(), &out)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("doctor = %v, want exit 1\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"ok    config", "ok    database", "FAIL  provider", "fix:"} {
		if !strings.Contains(report, want) {
			t.Fatalf("doctor report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "FAIL  database") || strings.Count(report, "FAIL") != 1 {
		t.Fatalf("only the provider should fail:\n%s", report)
	}
}
