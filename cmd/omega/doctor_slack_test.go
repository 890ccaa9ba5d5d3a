package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/slack/slacktest"
)

// `omega doctor` checks both Slack tokens as the channel uses them
// (auth.test with the bot token, apps.connections.open with the app
// token) and says which one was refused without showing it.
func TestDoctorChecksSlackTokens(t *testing.T) {
	s := slacktest.New(t)
	bin := buildOmega(t)
	run := func(bot, app string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"),
			"OMEGA_SLACK_BOT_TOKEN="+bot, "OMEGA_SLACK_APP_TOKEN="+app, "OMEGA_SLACK_API_URL="+s.APIURL(),
			"OMEGA_SLACK_ALLOWED_USERS=UALICE01")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	report := run(slacktest.BotToken, slacktest.AppToken)
	for _, want := range []string{"ok    slack      bot @omega (" + slacktest.BotUserID + ") in workspace slacktest",
		"ok    slack      Socket Mode connection offered"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	report = run("xoxb-wrong-2718", "xapp-wrong-3141")
	for _, want := range []string{"FAIL  slack      auth.test: Slack answered invalid_auth", "FAIL  slack      apps.connections.open: Slack answered invalid_auth",
		"fix: check OMEGA_SLACK_BOT_TOKEN", "fix: check OMEGA_SLACK_APP_TOKEN"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "wrong-2718") || strings.Contains(report, "wrong-3141") {
		t.Errorf("a token is in the report:\n%s", report)
	}
	if report := run("not-a-token", slacktest.AppToken); !strings.Contains(report, "SLACK_BOT_TOKEN is not a bot token") {
		t.Errorf("a malformed token is not named:\n%s", report)
	}
}
