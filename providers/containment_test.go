package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers/providertest"
)

// plantedSecrets are set in the test's environment the way an operator's
// configuration would be; none may reach a provider.
var plantedSecrets = map[string]string{
	"OMEGA_API_TOKEN":         "planted-api-token-1111",
	"OMEGA_TELEGRAM_TOKEN":    "123456:planted-telegram-token-2222",
	"OMEGA_ANTHROPIC_API_KEY": "planted-anthropic-key-3333",
	"OMEGA_OPENAI_API_KEY":    "planted-openai-key-4444",
	"OMEGA_DATABASE_URL":      "postgres://omega:planted-db-pass-5555@db/omega",
	"SECRET_X":                "planted-random-secret-6666",
}

func plant(t *testing.T) {
	for k, v := range plantedSecrets {
		t.Setenv(k, v)
	}
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("CLAUDE_CONFIG_DIR", "/tmp/claude-config")
}

func TestClaudeCodeEnvironmentIsAllowlisted(t *testing.T) {
	plant(t)
	dump := filepath.Join(t.TempDir(), "env")
	bin := providertest.FakeClaude(t, "env > '"+dump+"'\n"+providertest.ClaudeResult("ok", "s"))
	c, _ := newTestClaude(t, bin, nil)
	if _, err := c.Complete(t.Context(), Request{Prompt: "hi", WorkDir: t.TempDir()}); err != nil {
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

// TestHTTPProvidersSendOnlyTheirOwnKey checks the whole request of each
// HTTP provider (line, headers and body) for every other secret.
func TestHTTPProvidersSendOnlyTheirOwnKey(t *testing.T) {
	plant(t)
	cases := []struct {
		provider, path, ownKey string
		reply                  string
	}{
		{NameAnthropic, "/v1/messages", plantedSecrets["OMEGA_ANTHROPIC_API_KEY"], providertest.AnthropicReply("m", "ok")},
		{NameOpenAI, "/chat/completions", plantedSecrets["OMEGA_OPENAI_API_KEY"], providertest.OpenAIReply("m", "ok")},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			var mu sync.Mutex
			var seen []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := httputil.DumpRequest(r, true)
				mu.Lock()
				seen = append(seen, b...)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.reply))
			}))
			defer srv.Close()
			cfg := Config{Provider: tc.provider, ModelFast: "m", MaxTokens: 10,
				AnthropicAPIKey: plantedSecrets["OMEGA_ANTHROPIC_API_KEY"], AnthropicBaseURL: srv.URL,
				OpenAIAPIKey: plantedSecrets["OMEGA_OPENAI_API_KEY"], OpenAIBaseURL: srv.URL}
			p, err := New(cfg, discardLogger())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(t.Context(), Request{System: "s", Prompt: "hi"}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			mu.Lock()
			req := string(seen)
			mu.Unlock()
			if !strings.Contains(req, tc.path) || !strings.Contains(req, tc.ownKey) {
				t.Fatalf("request does not carry its own key to %s:\n%s", tc.path, req)
			}
			for name, secret := range plantedSecrets {
				if secret != tc.ownKey && strings.Contains(req, secret) {
					t.Errorf("%s request carries %s", tc.provider, name)
				}
			}
		})
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
	c := NewClaudeCode(Config{ClaudeBin: os.Getenv("OMEGA_TEST_PDEATH_BIN")}, discardLogger())
	_, _ = c.Complete(context.Background(), Request{Prompt: "long"})
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
		m, err := ParseSandbox(tc.mode)
		if err != nil {
			t.Fatalf("ParseSandbox(%q): %v", tc.mode, err)
		}
		args := m.permissionArgs()
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
	if _, err := ParseSandbox("jail"); err == nil {
		t.Error("an unknown sandbox mode was accepted")
	}
}
