package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/internal/freeport"
)

// omega serve registers Telegram's command menu, in each language it
// speaks, and neither the menu nor /help offers /whatsapp while WhatsApp
// is off.
func TestServeTelegramMenuAndHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	vars, _ := storeBackends()[0].env(t)
	claude, _ := crashClaude(t, t.TempDir())
	api := telegramtest.New(t, tgToken)
	addr := freeport.Addr(t)
	env := append(os.Environ(), vars...)
	env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLASSIFY=false", "OMEGA_WHATSAPP_ENABLED=false",
		"OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+api.URL, "OMEGA_TELEGRAM_ALLOWED_USERS=42", "HOME="+t.TempDir())
	startServe(t, bin, env)
	waitHTTP(t, "http://"+addr)
	api.PushText(42, 42, "/help")
	help := waitMessage(t, api, "/status")
	if strings.Contains(help, "/whatsapp") || !strings.Contains(help, "/skills") {
		t.Errorf("/help:\n%s", help)
	}

	menu := func(code string) []telegramtest.BotCommand {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if m, ok := api.Menu(code); ok {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("no command menu for language_code %q", code)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	describe := func(m []telegramtest.BotCommand) map[string]string {
		out := map[string]string{}
		for _, c := range m {
			out[c.Command] = c.Description
		}
		return out
	}
	def, es := describe(menu("")), describe(menu("es"))
	if def["help"] != "this list" || def["cancel"] != "<id> — cancel a task" || def["skills"] == "" {
		t.Errorf("default menu %v", def)
	}
	if es["help"] != "esta lista" {
		t.Errorf("Spanish menu %v", es)
	}
	if _, ok := def["whatsapp"]; ok {
		t.Errorf("the menu offers /whatsapp while WhatsApp is off: %v", def)
	}

}
