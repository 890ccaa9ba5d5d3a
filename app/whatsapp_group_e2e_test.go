package app_test

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"go.mau.fi/whatsmeow/types"
)

// WhatsApp groups (OMEGA_WHATSAPP_GROUPS) keep their own conversation and
// session too: after a private exchange, the same number's message in a
// group is answered without the private session or history, under the
// group rules.
func TestWhatsAppGroupKeepsItsOwnConversation(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			vars := baseVars(t, b, claude.bin)
			vars["OMEGA_WHATSAPP_ENABLED"], vars["OMEGA_WHATSAPP_GROUPS"] = "true", "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			cfg := loadConfig(t, vars)
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			auth := &pipeline.Auth{Allowed: map[string][]string{whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{wa}, Auth: auth}, nil)

			const ana = "4915112345678"
			group := types.NewJID("120363000000000001", types.GroupServer)
			say := func(id, text string, inGroup bool) {
				t.Helper()
				msg := whatsapptest.TextFrom(id, ana, text)
				if inGroup {
					msg.Info.Chat, msg.Info.IsGroup = group, true
				}
				waitFor(t, "the channel to acknowledge "+id, func() bool {
					ok, err := fake.Deliver(msg)
					if err != nil {
						t.Fatal(err)
					}
					return ok
				})
				evs := n.waitTurn(t, intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id}))
				if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
					t.Fatalf("%s: status %s: %s", id, got, eventTypes(evs))
				}
			}

			say("WAP1", "my secret is PRIVMARK-one", false)
			say("WAP2", "and PRIVMARK-two", false)
			privateSession := claude.lastTurnCall(t).resume
			say("WAG1", "hello GROUPMARK", true)
			call := claude.lastTurnCall(t)
			if call.resume != "-" {
				t.Fatalf("the group message resumed %s (the private session is %s)", call.resume, privateSession)
			}
			assertGroupPrompt(t, call.prompt)
			sent := fake.Sent()
			if last := sent[len(sent)-1]; last.To != group || !strings.Contains(last.Text, "GROUPMARK") {
				t.Fatalf("the group's reply went to %s: %q", last.To, last.Text)
			}
		})
	}
}
