package claudecode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

func TestClaudeCodeEnvironmentIsAllowlisted(t *testing.T) {
	plantedSecrets := providertest.PlantSecrets(t)
	dump := filepath.Join(t.TempDir(), "env")
	bin := providertest.FakeClaude(t, "env > '"+dump+"'\n"+providertest.ClaudeResult("ok", "s"))
	c, _ := newTestClaude(t, bin, nil)
	if _, err := c.Complete(t.Context(), providers.Request{Prompt: "hi", WorkDir: t.TempDir()}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the fake CLI did not dump its environment: %v", err)
	}
	env := string(raw)
	for name, secret := range plantedSecrets {
		if strings.Contains(env, secret) || strings.Contains(env, name+"=") {
			t.Errorf("%s reached the Claude Code process", name)
		}
	}
	if strings.Contains(env, "OMEGA_") {
		t.Errorf("an OMEGA_ variable reached the Claude Code process:\n%s", env)
	}
	for _, want := range []string{"PATH=", "LANG=C.UTF-8", "CLAUDE_CONFIG_DIR=/tmp/claude-config"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
}

func TestChildEnv(t *testing.T) {
	in := []string{"PATH=/bin", "OMEGA_API_TOKEN=x", "OMEGA_ANTHROPIC_API_KEY=y", "ANTHROPIC_API_KEY=own",
		"LC_ALL=C", "XDG_CONFIG_HOME=/c", "HTTPS_PROXY=p", "no_proxy=l", "CLAUDECODE=1", "AWS_SECRET_ACCESS_KEY=z",
		"SECRET_X=s", "GITHUB_TOKEN=g"}
	got := strings.Join(ChildEnv(in), " ")
	want := "PATH=/bin ANTHROPIC_API_KEY=own LC_ALL=C XDG_CONFIG_HOME=/c HTTPS_PROXY=p no_proxy=l"
	if got != want {
		t.Errorf("ChildEnv\n got %s\nwant %s", got, want)
	}
}

// TestClaudeCodeDiesWithOmega kills -9 a process that is waiting on a long
// Claude Code call (this test binary, re-executed) and checks that the CLI
// goes with it.
func TestClaudeCodeDiesWithOmega(t *testing.T) {
	if os.Getenv("OMEGA_TEST_PDEATH_HELPER") == "1" {
		runPdeathHelper()
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := providertest.FakeClaude(t, "echo $$ > '"+pidFile+"'\nexec sleep 300\n")
	helper := exec.Command(os.Args[0], "-test.run=^TestClaudeCodeDiesWithOmega$")
	helper.Env = append(os.Environ(), "OMEGA_TEST_PDEATH_HELPER=1", "OMEGA_TEST_PDEATH_BIN="+bin)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pid string
	for range 200 {
		if raw, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(raw)) != "" {
			pid = strings.TrimSpace(string(raw))
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if pid == "" {
		_ = helper.Process.Kill()
		t.Fatal("the helper never started the fake CLI")
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if !waitDead(pid) {
		t.Errorf("Claude Code process %s outlived the omega process that started it", pid)
		if p, err := os.FindProcess(atoi(pid)); err == nil {
			_ = p.Kill()
		}
	}
}

func runPdeathHelper() {
	c := New(providers.Config{ClaudeBin: os.Getenv("OMEGA_TEST_PDEATH_BIN")}, discardLogger())
	_, _ = c.Complete(context.Background(), providers.Request{Prompt: "long"})
	os.Exit(0)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestSandboxFlags(t *testing.T) {
	tests := []struct {
		mode, permission    string
		skip                bool
		allowed, disallowed []string
		neverAllowed        []string
	}{
		{"none", "", true, nil, nil, nil},
		{"", "acceptEdits", false, []string{"Read", "Bash"}, nil, []string{"Edit", "Write", "MultiEdit"}},
		{"workspace", "acceptEdits", false, []string{"Read", "Bash"}, nil, []string{"Edit", "Write", "MultiEdit"}},
		{"READONLY", "default", false, []string{"Read", "Grep"}, []string{"Bash", "Edit", "Write"}, []string{"Bash", "Edit", "Write"}},
	}
	for _, tc := range tests {
		m, err := providers.ParseSandbox(tc.mode)
		if err != nil {
			t.Fatalf("ParseSandbox(%q): %v", tc.mode, err)
		}
		args := permissionArgs(m)
		flags := map[string]string{}
		for i, a := range args {
			if strings.HasPrefix(a, "--") {
				flags[a] = ""
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
					flags[a] = args[i+1]
				}
			}
		}
		_, skip := flags["--dangerously-skip-permissions"]
		if skip != tc.skip || flags["--permission-mode"] != tc.permission {
			t.Errorf("%q: args %q", tc.mode, args)
		}
		allowed := strings.Split(flags["--allowedTools"], ",")
		disallowed := strings.Split(flags["--disallowedTools"], ",")
		for _, tool := range tc.allowed {
			if !slices.Contains(allowed, tool) {
				t.Errorf("%q: %s not allowed in %q", tc.mode, tool, args)
			}
		}
		for _, tool := range tc.disallowed {
			if !slices.Contains(disallowed, tool) {
				t.Errorf("%q: %s not disallowed in %q", tc.mode, tool, args)
			}
		}
		for _, tool := range tc.neverAllowed {
			if slices.Contains(allowed, tool) {
				t.Errorf("%q: %s allowed everywhere by %q", tc.mode, tool, args)
			}
		}
	}
	if _, err := providers.ParseSandbox("jail"); err == nil {
		t.Error("an unknown sandbox mode was accepted")
	}
}
