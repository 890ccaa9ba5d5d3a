package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/cmd/export"
	"github.com/omega-gateway/omega/domain/heartbeat"
)

// exportClaude writes a Claude Code double for a varied conversation:
// "REMIND" schedules a reminder and "ACTNOW" an action, both due in three
// seconds; a due action (its prompt ends with the ACTION_OUTCOME
// instruction) reports the weather; "BREAK" opens a self-healing effort
// whose follow-ups never resolve it, so it escalates to the owner; a
// heartbeat group holding "NEEDSUSER" alerts; anything else is echoed.
func exportClaude(t *testing.T) string {
	t.Helper()
	return writeClaude(t, t.TempDir(), `due=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
case "$prompt" in
  *"Self-healing follow-up"*) result="Still broken.\nSELF_HEAL: restarted the service | curl localhost:8080/health" ;;
  *"Group these heartbeat checklist items"*) result='health: 1' ;;
  *NEEDSUSER*) result='Time to stretch, you asked me to remind you.' ;;
  *)
    case "$last" in
      *ACTION_OUTCOME*) result='The weather is sunny.\nACTION_OUTCOME: success' ;;
      *REMIND*) result="Sure.\nSCHEDULE: Call Juan | $due | once" ;;
      *ACTNOW*) result="On it.\nSCHEDULE_ACTION: Check the weather | $due | once" ;;
      *BREAK*) result='The service is down, fixing.\nSELF_HEAL: service down | curl localhost:8080/health' ;;
      *) result="echo: $last" ;;
    esac ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$result"
`)
}

// buildOmega builds the omega binary, as a person runs it.
func buildOmega(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "omega")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/omega-gateway/omega/cmd/omega").CombinedOutput(); err != nil {
		t.Fatalf("build omega: %v\n%s", err, out)
	}
	return bin
}

// runOmega runs the built binary with the node's configuration.
func runOmega(t *testing.T, bin string, vars map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("omega %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// A conversation with a slash command in the middle, a scheduled action,
// a reminder, a heartbeat alert and a self-healing escalation, exported
// by `omega export`: one conversation, every message omega sent present
// and attributed to omega, the action's prompt to the task.
func TestExportTranscriptEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, exportClaude(t)), api, "42")
			vars["OMEGA_SELF_HEAL_DELAY"] = "100ms"
			vars["OMEGA_HEARTBEAT_INTERVAL"] = "2s"
			vars["OMEGA_TIMEZONE"] = "UTC"
			n := startTelegramNode(t, vars)
			say := func(text string) {
				id := api.PushText(42, 42, text)
				n.waitTurn(t, tgTurnID(42, id))
			}
			say("hello there")
			say("/help")
			say("REMIND me to call Juan")
			say("ACTNOW please")
			say("BREAK the service")
			setChecklist(t, n, heartbeat.GlobalHeartbeat, heartbeat.HeartbeatItemAdded{Item: "NEEDSUSER stretch"})
			for _, want := range []string{"Reminder: Call Juan", "The weather is sunny", "Self-healing gave up", "Time to stretch"} {
				waitForWithin(t, "a message with "+want, time.Minute, func() bool {
					return strings.Contains(strings.Join(heartbeatMessages(api), "\n"), want)
				})
			}
			say("thanks")
			n.stop()

			msgs := decodeJSONL(t, runOmega(t, bin, vars, "export", "--sender", "telegram:42", "--format", "jsonl"))
			checkExported(t, msgs)
			md := runOmega(t, bin, vars, "export", "--sender", "telegram:42")
			if c := strings.Count(md, "\n## Conversation "); c != 1 {
				t.Errorf("Markdown has %d conversations, want 1:\n%s", c, md)
			}
			if i := strings.Index(md, "**scheduled task**"); i < 0 || !strings.Contains(md[i:], "Check the weather") {
				t.Errorf("Markdown does not attribute the action's prompt to the task:\n%s", md)
			}
		})
	}
}

func decodeJSONL(t *testing.T, out string) []export.Message {
	t.Helper()
	var msgs []export.Message
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m export.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func checkExported(t *testing.T, msgs []export.Message) {
	t.Helper()
	convs := map[string]bool{}
	for _, m := range msgs {
		convs[m.ConversationID] = true
		if m.Role == export.RoleUser && strings.Contains(m.Text, "Check the weather") {
			t.Errorf("the action's prompt is attributed to the user: %+v", m)
		}
	}
	if len(convs) != 1 || convs[""] {
		t.Errorf("conversations %v, want one", convs)
	}
	for _, want := range []struct{ role, kind, text string }{
		{export.RoleUser, "", "/help"},
		{export.RoleTask, "", "Check the weather"},
		{export.RoleAssistant, "", "The weather is sunny"},
		{export.RoleAssistant, export.KindReminder, "Reminder: Call Juan"},
		{export.RoleAssistant, export.KindHeartbeatAlert, "Time to stretch"},
		{export.RoleAssistant, export.KindSelfHeal, "Self-healing gave up"},
		{export.RoleUser, "", "thanks"},
	} {
		found := false
		for _, m := range msgs {
			found = found || (m.Role == want.role && m.Kind == want.kind && strings.Contains(m.Text, want.text))
		}
		if !found {
			t.Errorf("no %s message (kind %q) with %q in the export", want.role, want.kind, want.text)
		}
	}
	if t.Failed() {
		b, _ := json.MarshalIndent(msgs, "", "  ")
		t.Logf("exported:\n%s", b)
	}
}
