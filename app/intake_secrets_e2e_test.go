package app_test

import (
	"os"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/internal/redact"
)

// A person who pastes omega's own secrets (the bot token, the API token, a
// provider key) into a message has them masked at intake: no event, audit
// row, prompt or reply holds them, and the message's record says how many
// were masked.
func TestOwnSecretsInAMessageAreMaskedAtIntake(t *testing.T) {
	const apiToken, providerKey = "omega-api-token-9f8e7d6c5b4a", "sk-ant-api03-TESTKEYaaaaBBBBccccDDDD"
	secrets := []string{tgToken, tgToken[strings.Index(tgToken, ":")+1:], apiToken, providerKey}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			claude, promptLog := richClaude(t)
			vars := telegramVars(baseVars(t, b, claude), api, "42")
			vars["OMEGA_API_TOKEN"], vars["OMEGA_ANTHROPIC_API_KEY"] = apiToken, providerKey
			n := startTelegramNode(t, vars)

			id := api.PushText(42, 42, "keep these safe: bot "+tgToken+" api "+apiToken+" key "+providerKey)
			evs := n.waitTurn(t, tgTurnID(42, id))
			received := payload[turn.MessageReceived](t, n, evs)
			if received.SecretsRedacted != 3 || !strings.Contains(received.Text, "bot "+redact.Mask+" api "+redact.Mask+" key "+redact.Mask) {
				t.Fatalf("MessageReceived: %d secrets redacted, text %q", received.SecretsRedacted, received.Text)
			}
			if !strings.Contains(payload[turn.ReplyReady](t, n, evs).Text, "echo: ") {
				t.Fatalf("no reply: %s", eventTypes(evs))
			}
			waitFor(t, "the audit row", func() bool {
				return n.queryInt(t, `SELECT count(*) FROM audit WHERE turn_id = $1`, tgTurnID(42, id)) == 1
			})
			prompts, err := os.ReadFile(promptLog)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if got := n.queryInt(t, `SELECT count(*) FROM events WHERE CAST(data AS TEXT) LIKE '%' || $1 || '%'`, s); got != 0 {
					t.Errorf("%d event(s) hold a secret", got)
				}
				if got := n.queryInt(t, `SELECT count(*) FROM audit WHERE input LIKE '%' || $1 || '%' OR output LIKE '%' || $1 || '%'`, s); got != 0 {
					t.Errorf("%d audit row(s) hold a secret", got)
				}
				if strings.Contains(string(prompts), s) {
					t.Errorf("the prompt holds a secret")
				}
				for _, c := range api.Sent() {
					if strings.Contains(c.Text, s) {
						t.Errorf("the reply echoes a secret: %q", c.Text)
					}
				}
			}
		})
	}
}

// The same over the HTTP API: the reply and the turn's record hold the
// mask, not the provider key.
func TestOwnSecretInAnHTTPMessageIsMasked(t *testing.T) {
	const providerKey = "sk-ant-api03-TESTKEYaaaaBBBBccccDDDD"
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := fakeClaude(t)
			vars := baseVars(t, b, claude)
			vars["OMEGA_ANTHROPIC_API_KEY"] = providerKey
			n := startNode(t, vars)
			out := say(t, n, "ana", "is this right? "+providerKey, "20s")
			if out.Reply != "echo: is this right? "+redact.Mask {
				t.Fatalf("reply %q", out.Reply)
			}
			for _, e := range turnEvents(t, n, out.TurnID) {
				if strings.Contains(string(e.Data), providerKey) {
					t.Errorf("%s holds the key: %s", e.Type, e.Data)
				}
				if e.Type == "MessageReceived" && !strings.Contains(string(e.Data), `"secrets_redacted":1`) {
					t.Errorf("MessageReceived does not record the redaction: %s", e.Data)
				}
			}
		})
	}
}
