package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/providers/providertest"
)

// buildEnv is what a build test's omega runs with: a fake Claude Code
// playing the default topology's agents, a Telegram double for the
// person's chat, and the data directory.
type buildEnv struct {
	bin, ctl, data, url string
	env                 []string
	api                 *telegramtest.Server
	open                func() eventstore.Store
}

func newBuildEnv(t *testing.T, bin string, backend storeBackend) *buildEnv {
	vars, open := backend.env(t)
	b := &buildEnv{bin: bin, ctl: t.TempDir(), api: telegramtest.New(t, tgToken), open: open}
	for _, v := range vars {
		if d, ok := strings.CutPrefix(v, "OMEGA_DATA_DIR="); ok {
			b.data = d
		}
	}
	addr := freeAddr(t)
	b.url = "http://" + addr
	b.env = append(os.Environ(), vars...)
	b.env = append(b.env, "OMEGA_CLAUDE_BIN="+providertest.BuildClaude(t, b.ctl), "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLASSIFY=false",
		"OMEGA_WHATSAPP_ENABLED=false", "OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+b.api.URL,
		"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_STATUS_FIRST=1s", "OMEGA_STATUS_EVERY=10s", "OMEGA_LEASE_TTL=1s", "HOME="+t.TempDir())
	return b
}

func (b *buildEnv) serve(t *testing.T) *proc {
	p := startServe(t, b.bin, b.env)
	waitHTTP(t, b.url)
	return p
}

// omega runs a command of the binary and returns its output and error.
func (b *buildEnv) omega(t *testing.T, args ...string) (string, error) {
	cmd := exec.Command(b.bin, args...)
	cmd.Env = b.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (b *buildEnv) touch(t *testing.T, name string) {
	if err := os.WriteFile(filepath.Join(b.ctl, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// calls counts the fake's log lines starting with prefix ("start build-qa").
func (b *buildEnv) calls(prefix string) int {
	raw, _ := os.ReadFile(filepath.Join(b.ctl, "calls.log"))
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// agentFiles lists the agent files in the workspace.
func (b *buildEnv) agentFiles() []string {
	m, _ := filepath.Glob(filepath.Join(b.data, "workspace", ".claude", "agents", "*.md"))
	return m
}

// buildEvents loads the build's stream, counting each type.
func buildEvents(t *testing.T, s eventstore.Store, id string) ([]domain.Event, map[string]int) {
	evs, err := s.Load(context.Background(), "build-"+id, 1)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	return evs, counts
}

// waitFor polls until cond holds, or fails with what.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The person asks for a build in chat; the chat shows the start with the
// worst case of agent calls, every phase in order, a delay nudge and the
// final summary; QA fails once and its corrective loop fixes it; a
// reviewer that never passes stops the build at its cap and the person
// is asked; the agent files are gone after success and after failure.
func TestBuildFromChat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, backend := range storeBackends() {
		t.Run(backend.name, func(t *testing.T) {
			b := newBuildEnv(t, bin, backend)
			b.touch(t, "pause-build-delivery")
			b.serve(t)
			b.api.PushText(42, 42, "/build a greeter that says hello")
			waitMessage(t, b.api, "Starting build a-greeter-that-says-hello")
			waitMessageWithin(t, b.api, "is done", 60*time.Second)
			want := []string{"at most 17 agent calls", "Analyzing your request", "Designing the architecture", "Writing the tests",
				"Writing the code", "Checking it works", "Reviewing the code", "Packaging the result", "This is taking a moment",
				"is done", "Your greeter is ready in builds/a-greeter-that-says-hello-"}
			var texts []string
			for _, m := range b.api.Messages(42) {
				texts = append(texts, m.Text)
			}
			all := strings.Join(texts, "\n")
			at := 0
			for _, w := range want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("the chat lacks %q after position %d:\n%s", w, at, all)
				}
				at += i
			}
			// 7 phases, QA's corrective loop adds a fix and a new check.
			if n := b.calls("start "); n != 9 || b.calls("start build-developer fix") != 1 || b.calls("start build-qa verify") != 1 {
				t.Fatalf("agent calls: %d\n%s", n, readFile(t, filepath.Join(b.ctl, "calls.log")))
			}
			if f := b.agentFiles(); len(f) != 0 {
				t.Fatalf("agent files left after success: %v", f)
			}
			out, err := b.omega(t, "build", "list")
			if err != nil || !strings.Contains(out, "completed") || !strings.Contains(out, " 9/17 calls") {
				t.Fatalf("build list: %v\n%s", err, out)
			}
			id := strings.Fields(out)[0]
			_, counts := buildEvents(t, b.open(), id)
			if counts["AgentCalled"] != 9 || counts["AgentReplied"] != 9 || counts["LoopIterated"] != 1 || counts["PhaseCompleted"] != 7 || counts["BuildCompleted"] != 1 {
				t.Fatalf("build events: %v", counts)
			}
			show, err := b.omega(t, "build", "show", id[:8])
			if err != nil || !strings.Contains(show, "README.md") || !strings.Contains(show, "corrective loop: 1 fix(es)") || !strings.Contains(show, "VERDICT: fail the greeting is missing") {
				t.Fatalf("build show: %v\n%s", err, show)
			}

			// Escalation: the reviewer never passes; its cap is 2 fixes.
			b.touch(t, "reviewer-fails")
			b.api.PushText(42, 42, "/build a second greeter")
			waitMessageWithin(t, b.api, "needs you", 60*time.Second)
			if n := b.calls("start build-reviewer"); n != 1+3 {
				t.Fatalf("reviewer calls: %d", n)
			}
			waitFor(t, 10*time.Second, "agent files removed after a failure", func() bool { return len(b.agentFiles()) == 0 })
		})
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var _ = syscall.SIGKILL
