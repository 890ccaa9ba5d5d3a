package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/internal/freeport"
)

// usageClaude answers each kind of call omega makes (the prompt arrives
// on standard input, as Claude Code gets it) and reports the same
// usage for every one (10 in, 5 out, $0.001), so each purpose's tokens
// are ten times its calls.
func usageClaude(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "claude")
	script := `#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"You route requests for a personal assistant"*) result='1. look at the logs\n2. write the fix' ;;
  *"scheduled heartbeat check-in"*) result='HEARTBEAT_OK' ;;
  *"Summarize the conversation below"*) result='They fixed a job.' ;;
  *"Extract durable personal facts"*) result='name: Ana' ;;
  *"Self-healing follow-up"*) result='It passes now.\nSELF_HEAL_RESOLVED' ;;
  *"please heal"*) result='On it.\nSELF_HEAL: the nightly job fails | run the nightly job' ;;
  *) result='done' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s","num_turns":1,"total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$result" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Every provider call is accounted by its purpose: a turn, a classifier
// call and the plan steps it starts, a heartbeat check-in, the summary
// and fact extraction of a conversation gone idle and a self-heal
// follow-up each show in /metrics, in GET /api/audit?stats=1&by=purpose
// and on the web UI's usage page, with the tokens the provider reported.
func TestEveryProviderCallIsAccountedByPurpose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, _ := b.env(t)
			api := telegramtest.New(t, tgToken)
			addr := freeport.Addr(t)
			url := "http://" + addr
			env := append(os.Environ(), vars...)
			env = append(env, "OMEGA_CLAUDE_BIN="+usageClaude(t), "OMEGA_HTTP_ADDR="+addr, "OMEGA_LEASE_TTL=1s", "OMEGA_STATUS_FIRST=0s",
				"OMEGA_CLASSIFY=true", "OMEGA_CONVERSATION_IDLE=2s", "OMEGA_SELF_HEAL_DELAY=1s", "OMEGA_HEARTBEAT_INTERVAL=2s",
				"OMEGA_TIMEZONE=UTC", "HOME="+t.TempDir(),
				"OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+api.URL, "OMEGA_TELEGRAM_ALLOWED_USERS=42")
			for _, v := range vars {
				if dir, ok := strings.CutPrefix(v, "OMEGA_DATA_DIR="); ok {
					writeFile(t, filepath.Join(dir, "prompts", "HEARTBEAT.md"), "- check the backups\n")
				}
			}
			startServe(t, bin, env)
			waitHTTP(t, url)

			if out := postMessage(t, url, "ops", "first look at the logs and then write the fix", "60s"); out["status"] != "ok" {
				t.Fatalf("plan turn: %v", out)
			}
			if out := postMessage(t, url, "ops", "please heal the nightly job", "60s"); out["status"] != "ok" {
				t.Fatalf("self-heal turn: %v", out)
			}

			// Every purpose but builds', whose agent calls TestBuildFromChat
			// accounts.
			exercised := slices.DeleteFunc(usage.Purposes(), func(p string) bool { return p == usage.PurposeBuild })
			calls := func(body, purpose string) string {
				return metricValue(body, fmt.Sprintf(`omega_provider_calls_total{outcome="ok",purpose=%q}`, purpose))
			}
			var body string
			deadline := time.Now().Add(60 * time.Second)
			for {
				_, body = httpBody(t, url+"/metrics")
				missing := 0
				for _, p := range exercised {
					if calls(body, p) == "" {
						missing++
					}
				}
				if missing == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/metrics lacks some purposes:\n%s", grepLines(body, "omega_provider_"))
				}
				time.Sleep(200 * time.Millisecond)
			}
			if got := calls(body, usage.PurposePlanStep); got != "2" {
				t.Errorf("plan steps counted %s, want 2", got)
			}
			for _, p := range exercised {
				var n, in float64
				fmt.Sscan(calls(body, p), &n)
				fmt.Sscan(metricValue(body, fmt.Sprintf(`omega_provider_tokens_total{kind="input",purpose=%q}`, p)), &in)
				if n < 1 || in < 10*n {
					t.Errorf("%s: %v calls, %v input tokens in /metrics", p, n, in)
				}
			}

			// The audit counts the same calls by purpose (its read model
			// may trail the log a moment).
			byPurpose := map[string]auditStat{}
			deadline = time.Now().Add(30 * time.Second)
			for len(byPurpose) < len(exercised) {
				if time.Now().After(deadline) {
					t.Fatalf("audit stats by purpose: %v", byPurpose)
				}
				time.Sleep(200 * time.Millisecond)
				byPurpose = auditByPurpose(t, url)
			}
			for _, p := range exercised {
				if s := byPurpose[p]; s.Calls < 1 || s.InputTokens != 10*s.Calls || s.OutputTokens != 5*s.Calls || s.Reported != s.Calls {
					t.Errorf("audit stats for %s: %+v", p, s)
				}
			}
			code, page := httpBody(t, url+"/ui/usage")
			if code != 200 {
				t.Fatalf("/ui/usage: %d\n%s", code, page)
			}
			for _, p := range exercised {
				s := byPurpose[p]
				// The number of calls links to the calls it sums.
				row := fmt.Sprintf(`<td>%s</td><td><a href="/ui/calls?purpose=%s">%d</a></td>`, p, p, s.Calls)
				if !strings.Contains(page, row) || !strings.Contains(page, fmt.Sprintf("%d / %d", s.InputTokens, s.OutputTokens)) {
					t.Errorf("/ui/usage lacks %s's row (%s, tokens %d / %d):\n%s", p, row, s.InputTokens, s.OutputTokens, page)
				}
			}
		})
	}
}

type auditStat struct {
	Group        string `json:"group"`
	Calls        int64  `json:"calls"`
	Reported     int64  `json:"usage_reported_turns"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
}

// auditByPurpose reads GET /api/audit?stats=1&by=purpose, by purpose.
func auditByPurpose(t *testing.T, url string) map[string]auditStat {
	t.Helper()
	code, body := httpBody(t, url+"/api/audit?stats=1&by=purpose&format=json")
	if code != 200 {
		t.Fatalf("audit stats: %d %s", code, body)
	}
	var out struct {
		Stats []auditStat `json:"stats"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	m := map[string]auditStat{}
	for _, s := range out.Stats {
		m[s.Group] = s
	}
	return m
}

// metricValue returns the sample line's value of name{labels}, or "".
func metricValue(body, series string) string {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

func grepLines(body, prefix string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
