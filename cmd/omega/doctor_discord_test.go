package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/discord/discordtest"
	"github.com/omega-gateway/omega/internal/freeport"
)

// `omega doctor` asks the Discord double who the token is, whether the
// Message Content intent is on, and opens its gateway as far as HELLO; a
// wrong token fails without being shown, the intent switched off fails
// with its fix, and an unreachable API says so.
func TestDoctorChecksDiscord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	gw := discordtest.New(t, discordToken)
	bin := buildOmega(t)
	run := func(token, apiURL string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_EMAIL_IMAP_ADDR=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"),
			"OMEGA_DISCORD_TOKEN="+token, "OMEGA_DISCORD_API_URL="+apiURL, "OMEGA_DISCORD_ALLOWED_USERS="+discordOwner)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	report := run(discordToken, gw.URL)
	for _, want := range []string{"ok    discord    bot omega (" + discordtest.BotID + ")", "ok    discord    gateway reachable (heartbeat every 41250 ms)",
		"ok    discord    Message Content intent on"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	report = run("wrong-token-2718", gw.URL)
	for _, want := range []string{"FAIL  discord    the API refused or did not answer: HTTP 401", "fix: check OMEGA_DISCORD_TOKEN"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "wrong-token-2718") {
		t.Errorf("the token is in the report:\n%s", report)
	}
	gw.DisallowMessageContent()
	if report = run(discordToken, gw.URL); !strings.Contains(report, "FAIL  discord    the Message Content intent is off") ||
		!strings.Contains(report, "fix: switch on Message Content Intent") {
		t.Errorf("the intent switched off is not a failure:\n%s", report)
	}
	if report = run(discordToken, "http://"+freeport.Addr(t)); !strings.Contains(report, "FAIL  discord    gateway: GET /gateway") {
		t.Errorf("an unreachable API is not a failure:\n%s", report)
	}
}
