package app_test

import (
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/providers/providertest"
)

// toolPromises are the words by which a prompt asks the model to act
// with tools: a provider that only writes text must not meet them.
var toolPromises = regexp.MustCompile(`(?i)\b(tools?|run|command|commands)\b`)

// A heartbeat check-in and a self-heal follow-up ask only what the
// provider can do: Claude Code is asked to check with its tools and to
// run the verification; the Anthropic and OpenAI-compatible APIs, which
// only write text, are asked to judge the checklist from what they are
// told, and no follow-up is made for them (they could not run the
// verification), which the log says once. Checked on the prompts each
// provider received.
func TestCheckInAndSelfHealPromptsDescribeOnlyWhatRuns(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, prov := range userPromptProviders() {
				t.Run(prov.name, func(t *testing.T) {
					checkInAndSelfHeal(t, b, prov)
				})
			}
		})
	}
}

func checkInAndSelfHeal(t *testing.T, b backend, prov userPromptProvider) {
	api := telegramtest.New(t, tgToken)
	vars := telegramVars(baseVars(t, b, ""), api, "42")
	received := prov.start(t, vars)
	vars["OMEGA_HEARTBEAT_ENABLED"], vars["OMEGA_HEARTBEAT_INTERVAL"], vars["OMEGA_TIMEZONE"] = "true", "1s", "UTC"
	vars["OMEGA_SELF_HEAL_DELAY"] = "100ms"
	var logs syncBuffer
	n := startTelegramNodeLogged(t, vars, slog.New(slog.NewTextHandler(&logs, nil)))
	setChecklist(t, n, heartbeat.GlobalHeartbeat, heartbeat.HeartbeatItemAdded{Item: "Check that the backup finished"})
	api.PushText(42, 42, "BREAK the service")

	checkIn := waitForPrompt(t, received, "scheduled heartbeat check-in")
	if prov.tools != strings.Contains(checkIn, "with your tools") {
		t.Errorf("tools %v, check-in prompt:\n%s", prov.tools, checkIn)
	}
	if !prov.tools {
		if m := toolPromises.FindString(checkIn); m != "" {
			t.Errorf("a provider without tools is asked %q in its check-in:\n%s", m, checkIn)
		}
		if !strings.Contains(checkIn, "judge each item") {
			t.Errorf("the check-in does not say how to work without tools:\n%s", checkIn)
		}
	}

	if prov.tools {
		followUp := waitForPrompt(t, received, "Self-healing follow-up")
		if !strings.Contains(followUp, "Run the verification test now") {
			t.Errorf("follow-up prompt:\n%s", followUp)
		}
		return
	}
	waitFor(t, "the reason self-healing is not followed up", func() bool {
		return strings.Contains(logs.String(), "selfheal: not following up")
	})
	if got := selfHealEvents(t, n); got["SelfHealStarted"] != 1 {
		t.Fatalf("self-heal events %v", got)
	}
	for _, p := range received() {
		if strings.Contains(p, "Self-healing follow-up") {
			t.Fatalf("a provider without tools got a follow-up:\n%s", p)
		}
	}
	if c := strings.Count(logs.String(), "selfheal: not following up"); c != 1 {
		t.Errorf("the reason is logged %d times:\n%s", c, logs.String())
	}
}

// waitForPrompt waits for a received prompt that holds marker.
func waitForPrompt(t *testing.T, received func() []string, marker string) string {
	t.Helper()
	var found string
	waitFor(t, "a prompt with "+marker, func() bool {
		for _, p := range received() {
			if strings.Contains(p, marker) {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// startTelegramNodeLogged is startTelegramNode with the process logger
// given.
func startTelegramNodeLogged(t *testing.T, vars map[string]string, logger *slog.Logger) *tgNode {
	t.Helper()
	cfg := loadConfig(t, vars)
	tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
	if err != nil {
		t.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs()}}
	return startLoggedNode(t, cfg, logger, app.RuntimeOptions{Channels: []channels.Channel{tg}, Auth: auth, BotName: tg.BotUsername}, nil)
}

// userPromptProvider is a provider double that records every prompt it
// is sent (the user's part, without the system prompt) and answers:
// "BREAK" opens a self-heal effort, a follow-up resolves it, anything
// else is HEARTBEAT_OK.
type userPromptProvider struct {
	name  string
	tools bool
	start func(t *testing.T, vars map[string]string) (received func() []string)
}

func answerFor(prompt string) string {
	switch {
	case strings.Contains(prompt, "Self-healing follow-up"):
		return "Fixed.\nSELF_HEAL_RESOLVED"
	case strings.Contains(prompt, "BREAK"):
		return "The service is down.\nSELF_HEAL: service down | curl localhost:8080/health"
	}
	return "HEARTBEAT_OK"
}

// promptRecord is a list of prompts that tests read while the node adds.
type promptRecord struct {
	mu      sync.Mutex
	prompts []string
}

func (r *promptRecord) add(p string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts = append(r.prompts, p)
	return answerFor(p)
}

func (r *promptRecord) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.prompts...)
}

func lastUser(msgs []providertest.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func userPromptProviders() []userPromptProvider {
	return []userPromptProvider{
		{"claude-code", true, func(t *testing.T, vars map[string]string) func() []string {
			dir := t.TempDir()
			log := filepath.Join(dir, "prompts.log")
			vars["OMEGA_CLAUDE_BIN"] = writeClaude(t, dir, `printf '<<<\n%s\n>>>\n' "$prompt" >> "`+log+`"
case "$prompt" in
  *"Self-healing follow-up"*) result='Fixed.\nSELF_HEAL_RESOLVED' ;;
  *BREAK*) result='The service is down.\nSELF_HEAL: service down | curl localhost:8080/health' ;;
  *) result='HEARTBEAT_OK' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$result"
`)
			return func() []string { return promptsOf(t, log) }
		}},
		{"anthropic", false, func(t *testing.T, vars map[string]string) func() []string {
			var rec promptRecord
			srv := providertest.NewAnthropicServer(t, func(req providertest.MessagesRequest) (int, string, map[string]string) {
				return 200, providertest.AnthropicReply(req.Model, rec.add(lastUser(req.Messages))), nil
			})
			vars["OMEGA_PROVIDER"], vars["OMEGA_ANTHROPIC_API_KEY"], vars["OMEGA_ANTHROPIC_BASE_URL"] = "anthropic", "test-key", srv.URL
			return rec.all
		}},
		{"openai", false, func(t *testing.T, vars map[string]string) func() []string {
			var rec promptRecord
			srv := providertest.NewOpenAIServer(t, func(req providertest.ChatRequest) (int, string, map[string]string) {
				return 200, providertest.OpenAIReply(req.Model, rec.add(lastUser(req.Messages))), nil
			})
			vars["OMEGA_PROVIDER"], vars["OMEGA_OPENAI_BASE_URL"] = "openai", srv.URL
			return rec.all
		}},
	}
}
