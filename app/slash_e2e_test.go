package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/heartbeat"
)

// /heartbeat shows a "## Section" header as the section it is, not as an
// item, and an interval of one minute without a wrong plural.
func TestHeartbeatCommandShowsSections(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			n, api, _ := heartbeatNode(t, b, nil)
			setChecklist(t, n, heartbeat.GlobalHeartbeat,
				heartbeat.HeartbeatItemAdded{Item: "Check the backups"},
				heartbeat.HeartbeatItemAdded{Item: "## Trading — autonomous engine"},
				heartbeat.HeartbeatItemAdded{Item: "Review positions"},
				heartbeat.HeartbeatIntervalSet{Minutes: 1})
			api.PushText(42, 42, "/heartbeat")
			// The first contact is welcomed before the answer.
			waitFor(t, "/heartbeat answer", func() bool { return len(heartbeatMessages(api)) >= 2 })
			report := heartbeatMessages(api)[1]
			for _, want := range []string{"• Check the backups", "\nTrading:\n• Review positions", "1 min."} {
				if !strings.Contains(report, want) {
					t.Errorf("/heartbeat lacks %q:\n%s", want, report)
				}
			}
			if strings.Contains(report, "## Trading") || strings.Contains(report, "1 minutes") {
				t.Errorf("/heartbeat:\n%s", report)
			}
		})
	}
}

// /skills lists a skill added while omega runs at once, without waiting
// for an ordinary message to import it.
func TestSkillsCommandSeesANewSkill(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			bin, _ := richClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, bin), api, "42")
			startTelegramNode(t, vars)
			api.PushText(42, 42, "/skills")
			waitFor(t, "the first /skills answer", func() bool { return len(api.Messages(42)) >= 2 })

			p := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", "notes")
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(notesSkill), 0o600); err != nil {
				t.Fatal(err)
			}
			api.PushText(42, 42, "/skills")
			waitFor(t, "the second /skills answer", func() bool { return len(api.Messages(42)) >= 3 })
			if got := api.Messages(42)[2].Text; !strings.Contains(got, "notes: Keeps notes") {
				t.Fatalf("/skills right after a skill was added:\n%s", got)
			}
		})
	}
}

// A global and a project check-in that both need the owner arrive as two
// messages that say which heartbeat each is, not as two identical ones.
func TestHeartbeatAlertsSayWhichHeartbeat(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			bin, _ := heartbeatClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, bin), api, "42")
			vars["OMEGA_HEARTBEAT_INTERVAL"] = "2s"
			for rel, text := range map[string]string{"prompts/HEARTBEAT.md": "- NEEDSUSER remind me to stretch\n",
				"projects/trader/HEARTBEAT.md": "- NEEDSUSER check BTC\n", "projects/trader/ROLE.md": "You run the trading desk.\n"} {
				p := filepath.Join(vars["OMEGA_DATA_DIR"], rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			startTelegramNode(t, vars)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("messages:\n%s", strings.Join(heartbeatMessages(api), "\n====\n"))
				}
			})
			var global, project string
			waitFor(t, "a global and a project alert", func() bool {
				for _, m := range heartbeatMessages(api) {
					switch {
					case strings.HasPrefix(m, "Heartbeat — project trader:"):
						project = m
					case strings.HasPrefix(m, "Heartbeat:"):
						global = m
					}
				}
				return global != "" && project != ""
			})
			if !strings.Contains(global, "Time to stretch") || !strings.Contains(project, "Time to stretch") {
				t.Fatalf("global %q, project %q", global, project)
			}
		})
	}
}
