package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fakeClaude installs testdata/<name> as an executable in a temp dir, so the
// tests do not depend on the executable bit surviving a checkout. vars
// ("NAME=value") are written into the script: the CLI's environment is an
// allowlist, so a test cannot hand them over through its own.
func fakeClaude(t *testing.T, name string, vars ...string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read script: %v", err)
	}
	shebang, body, _ := strings.Cut(string(script), "\n")
	var exports strings.Builder
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		fmt.Fprintf(&exports, "%s='%s'; export %s\n", k, strings.ReplaceAll(val, "'", `'\''`), k)
	}
	return providertest.FakeClaude(t, shebang+"\n"+exports.String()+body)
}

// newTestClaude returns a claude-code provider for bin whose resume waits are
// recorded instead of slept.
func newTestClaude(t *testing.T, bin string, mutate func(*providers.Config)) (*Provider, *[]time.Duration) {
	t.Helper()
	cfg := providers.Config{ClaudeBin: bin, ClaudeMaxTurns: 7, ClaudeMaxResumes: 5,
		ClaudeResumeBackoff: 2 * time.Second, ModelFast: "fast-model"}
	if mutate != nil {
		mutate(&cfg)
	}
	c := New(cfg, discardLogger())
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, &waits
}

func TestClaudeCodeSuccess(t *testing.T) {
	c, _ := newTestClaude(t, fakeClaude(t, "claude-success.sh"), nil)
	resp, err := c.Complete(t.Context(), providers.Request{Prompt: "hi", Model: "sonnet"})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := providers.Response{Text: "Hello from fake Claude.", SessionID: "sess-ok", Model: "sonnet",
		NumTurns: 2, InputTokens: 120, OutputTokens: 30, CacheReadTokens: 20, CostUSD: 0.01, UsageReported: true,
		PromptBytes: 2, ReplyBytes: 23}
	resp.Duration = 0
	if resp != want {
		t.Errorf("got  %+v\nwant %+v", resp, want)
	}
}

// readArgv reads what claude-argv.sh recorded.
func readArgv(t *testing.T, path string) (args []string, env map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read argv: %v", err)
	}
	fields := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	env = map[string]string{}
	for _, f := range fields[len(fields)-2:] {
		k, v, _ := strings.Cut(f, "=")
		env[k] = v
	}
	return fields[:len(fields)-2], env
}

func TestClaudeCodeInvocation(t *testing.T) {
	history := []providers.Message{{Role: "user", Content: "earlier question"}, {Role: "assistant", Content: "earlier answer"}}
	tests := []struct {
		name       string
		req        providers.Request
		wantArgs   []string
		wantPrompt string // on stdin, never on the command line
	}{
		{
			name: "fresh session folds system and history",
			req:  providers.Request{System: "You are omega.", History: history, Prompt: "new question", Model: "opus", MaxTurns: 3},
			wantArgs: []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", "opus", "--max-turns", "3",
				"--permission-mode", "acceptEdits", "--allowedTools", readTools + ",Bash,Task"},
			wantPrompt: "You are omega.\n\nConversation so far:\n[User]: earlier question\n[Assistant]: earlier answer\n\n[User]: new question",
		},
		{
			name: "resume sends only the prompt",
			req:  providers.Request{System: "ignored", History: history, Prompt: "Current time: now\n\nnew question", SessionID: "sess-9"},
			wantArgs: []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", "fast-model",
				"--resume", "sess-9", "--max-turns", "7", "--permission-mode", "acceptEdits", "--allowedTools", readTools + ",Bash,Task"},
			wantPrompt: "Current time: now\n\nnew question",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argvFile := filepath.Join(t.TempDir(), "argv")
			bin := fakeClaude(t, "claude-argv.sh", "FAKE_CLAUDE_ARGV="+argvFile)
			t.Setenv("CLAUDECODE", "1")
			workDir := t.TempDir()
			tt.req.WorkDir = workDir
			c, _ := newTestClaude(t, bin, nil)

			resp, err := c.Complete(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			args, env := readArgv(t, argvFile)
			if strings.Join(args, "|") != strings.Join(tt.wantArgs, "|") {
				t.Errorf("args\n got %q\nwant %q", args, tt.wantArgs)
			}
			if env["CLAUDECODE"] != "<unset>" {
				t.Errorf("CLAUDECODE leaked into the CLI: %q", env["CLAUDECODE"])
			}
			if got, _ := filepath.EvalSymlinks(env["PWD"]); got != mustEvalSymlinks(t, workDir) {
				t.Errorf("ran in %q, want %q", env["PWD"], workDir)
			}
			if resp.Model != "claude-test-model" {
				t.Errorf("model %q, want the one the CLI reported", resp.Model)
			}
			if resp.PromptBytes != len(tt.wantPrompt) {
				t.Errorf("PromptBytes %d, want %d", resp.PromptBytes, len(tt.wantPrompt))
			}
			if stdin := readFile(t, argvFile+".stdin"); stdin != tt.wantPrompt {
				t.Errorf("prompt on stdin\n got %q\nwant %q", stdin, tt.wantPrompt)
			}
			// What any local user reads in ps or /proc/PID/cmdline.
			cmdline := readFile(t, argvFile+".cmdline")
			for _, line := range strings.Split(tt.wantPrompt, "\n") {
				if line != "" && strings.Contains(cmdline, line) {
					t.Errorf("prompt text %q on the command line: %q", line, cmdline)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustEvalSymlinks(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readCalls returns the argv of each call claude-maxturns.sh recorded.
func readCalls(t *testing.T, path string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read state: %v", err)
	}
	var calls [][]string
	for line := range strings.Lines(string(raw)) {
		calls = append(calls, strings.Split(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\x00"), "\x00"))
	}
	return calls
}

// stdinOf is the prompt claude-maxturns.sh recorded, newlines as spaces.
func stdinOf(call []string) string {
	return strings.TrimPrefix(call[len(call)-1], "STDIN=")
}

func argAfter(args []string, flag string) string {
	for i, a := range args[:len(args)-1] {
		if a == flag {
			return args[i+1]
		}
	}
	return ""
}

func TestClaudeCodeAutoResume(t *testing.T) {
	tests := []struct {
		name        string
		limitHits   int
		maxResumes  int
		wantText    string
		wantResumes int
		wantWaits   []time.Duration
	}{
		{"finishes after two resumes", 2, 5, "part 1\n\npart 2\n\ndone", 2, []time.Duration{2 * time.Second, 4 * time.Second}},
		{"stops at the resume limit", 10, 2, "part 1\n\npart 2\n\npart 3", 2, []time.Duration{2 * time.Second, 4 * time.Second}},
		{"no resume needed", 0, 5, "done", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			bin := fakeClaude(t, "claude-maxturns.sh", "FAKE_CLAUDE_STATE="+state,
				"FAKE_CLAUDE_LIMIT_HITS="+strconv.Itoa(tt.limitHits))
			c, waits := newTestClaude(t, bin, func(cfg *providers.Config) { cfg.ClaudeMaxResumes = tt.maxResumes })

			resp, err := c.Complete(t.Context(), providers.Request{Prompt: "big task"})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text != tt.wantText || resp.Resumes != tt.wantResumes || resp.SessionID != "sess-long" {
				t.Errorf("got text %q resumes %d session %q", resp.Text, resp.Resumes, resp.SessionID)
			}
			if !slices.Equal(*waits, tt.wantWaits) {
				t.Errorf("waits %v, want %v", *waits, tt.wantWaits)
			}
			calls := readCalls(t, state)
			if len(calls) != tt.wantResumes+1 {
				t.Fatalf("%d calls, want %d", len(calls), tt.wantResumes+1)
			}
			if got := argAfter(calls[0], "--resume"); got != "" {
				t.Errorf("first call resumed %q", got)
			}
			for i, call := range calls[1:] {
				if argAfter(call, "--resume") != "sess-long" || stdinOf(call) != continuePrompt || slices.Contains(call[:len(call)-1], continuePrompt) {
					t.Errorf("resume %d: args %q", i+1, call)
				}
			}
			if resp.PromptBytes != len("big task")+tt.wantResumes*len(continuePrompt) {
				t.Errorf("PromptBytes %d", resp.PromptBytes)
			}
		})
	}
}

func TestClaudeCodeFailures(t *testing.T) {
	isError := `cat <<'JSON'
{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 rate limit exceeded","session_id":"s"}
JSON
exit 1`
	tests := []struct {
		name       string
		bin        func(t *testing.T) string
		wantClass  providers.Class
		wantStatus int
		wantInMsg  string
	}{
		{"malformed output", func(t *testing.T) string { return fakeClaude(t, "claude-malformed.sh") }, providers.Malformed, 0, "not json"},
		{"non-zero exit", func(t *testing.T) string { return fakeClaude(t, "claude-fail.sh") }, providers.Server, 3, "could not connect to the mothership"},
		{"missing binary", func(t *testing.T) string { return filepath.Join(t.TempDir(), "no-such-claude") }, providers.Unavailable, 0, "npm i -g @anthropic-ai/claude-code"},
		{"reported API error", func(t *testing.T) string { return providertest.FakeClaude(t, isError) }, providers.RateLimited, 1, "429 rate limit"},
		{"empty reply", func(t *testing.T) string { return providertest.FakeClaude(t, providertest.ClaudeResult("", "s")) }, providers.Malformed, 0, "empty reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClaude(t, tt.bin(t), nil)
			_, err := c.Complete(t.Context(), providers.Request{Prompt: "hi"})
			var pe *providers.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *Error", err)
			}
			if pe.Class != tt.wantClass || pe.Status != tt.wantStatus {
				t.Errorf("class %v status %d, want %v %d (%v)", pe.Class, pe.Status, tt.wantClass, tt.wantStatus, err)
			}
			if !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantInMsg)
			}
		})
	}
}

func TestClaudeCodeTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c, _ := newTestClaude(t, fakeClaude(t, "claude-hang.sh", "FAKE_CLAUDE_PIDFILE="+pidFile), nil)

	_, err := c.Complete(t.Context(), providers.Request{Prompt: "hang", Timeout: 300 * time.Millisecond})
	if providers.ClassOf(err) != providers.Timeout {
		t.Fatalf("got %v, want a Timeout", err)
	}
	raw, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatalf("the script never started its child: %v", rerr)
	}
	pid := strings.TrimSpace(string(raw))
	if !waitDead(pid) {
		t.Errorf("child %s of the CLI survived the timeout", pid)
	}
}

// waitDead reports whether pid is gone or a zombie within a few seconds;
// SIGKILL is asynchronous, so death is not instant.
func waitDead(pid string) bool {
	for range 100 {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func TestClaudeCodeCallerCancel(t *testing.T) {
	c, _ := newTestClaude(t, fakeClaude(t, "claude-hang.sh", "FAKE_CLAUDE_PIDFILE="+filepath.Join(t.TempDir(), "pid")), nil)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)

	_, err := c.Complete(ctx, providers.Request{Prompt: "hang"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if providers.ClassOf(err) == providers.Timeout {
		t.Errorf("a cancellation by the caller was reported as a timeout")
	}
}

func TestClaudeCodeCheck(t *testing.T) {
	ok, _ := newTestClaude(t, fakeClaude(t, "claude-success.sh"), nil)
	if err := ok.Check(t.Context()); err != nil {
		t.Errorf("Check with a present binary: %v", err)
	}
	missing, _ := newTestClaude(t, "omega-test-no-such-claude", nil)
	err := missing.Check(t.Context())
	if providers.ClassOf(err) != providers.Unavailable {
		t.Fatalf("got %v, want Unavailable", err)
	}
	for _, want := range []string{"npm i -g @anthropic-ai/claude-code", "OMEGA_CLAUDE_BIN"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q does not say %q", err, want)
		}
	}
}

func TestParseCLIResultVerboseArray(t *testing.T) {
	out := `[{"type":"system","subtype":"init"},{"type":"assistant"},{"type":"result","subtype":"success","result":"r","session_id":"s"}]`
	res, err := parseCLIResult([]byte(out))
	if err != nil || res.Result != "r" || res.SessionID != "s" {
		t.Fatalf("got %+v, %v", res, err)
	}
	if _, err := parseCLIResult([]byte(`[{"type":"system"}]`)); err == nil {
		t.Error("an array without a result parsed")
	}
}

func TestProvidertestClaudeResult(t *testing.T) {
	c, _ := newTestClaude(t, providertest.FakeClaude(t, providertest.ClaudeResult("it's \"quoted\"", "s-1")), nil)
	resp, err := c.Complete(t.Context(), providers.Request{Prompt: "x"})
	if err != nil || resp.Text != `it's "quoted"` || resp.SessionID != "s-1" {
		t.Fatalf("got %+v, %v", resp, err)
	}
}
