package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers/senders"
)

// The prompt (the sender's message and facts, the system prompt) reaches
// Claude Code on stdin, never on its command line, which every local user
// can read in ps and /proc/PID/cmdline.
func TestPromptIsNotOnTheCommandLine(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			cmdline, stdin := filepath.Join(dir, "cmdline"), filepath.Join(dir, "stdin")
			claude := writeClaude(t, dir, `tr '\0' ' ' < /proc/$$/cmdline > "`+cmdline+`"
printf '%s' "$prompt" > "`+stdin+`"
printf '{"type":"result","subtype":"success","is_error":false,"result":"noted","session_id":"sess-1","num_turns":1}\n'
`)
			n := startNode(t, baseVars(t, b, claude))
			if err := n.rt.Senders.RecordFact(context.Background(), &senders.RecordFact{Channel: "http", SenderID: "ana",
				Key: "allergy", Value: "peanuts and shellfish", Source: "user", Meta: domain.Metadata{CorrelationID: "test"}}); err != nil {
				t.Fatal(err)
			}
			if out := say(t, n, "ana", "what do you know about me? my locker code is 4417", "20s"); out.Reply != "noted" {
				t.Fatalf("turn: %+v", out)
			}
			got, err := os.ReadFile(stdin)
			if err != nil {
				t.Fatal(err)
			}
			args, err := os.ReadFile(cmdline)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range []string{"my locker code is 4417", "peanuts and shellfish"} {
				if !strings.Contains(string(got), text) {
					t.Errorf("the prompt on stdin lacks %q:\n%s", text, got)
				}
				if strings.Contains(string(args), text) {
					t.Errorf("%q is on the command line: %s", text, args)
				}
			}
			if len(args) > 1000 {
				t.Errorf("the command line carries %d bytes: %s", len(args), args)
			}
		})
	}
}
