package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// rerunClaude routes "quarterly report" to a two-step plan and the rest
// to a direct answer; answers "call Juan" with a SCHEDULE marker, fails
// on "fail please" and echoes the rest.
func rerunClaude(t *testing.T) string {
	return writeClaude(t, t.TempDir(), `case "$prompt" in
  "You route requests"*)
    case "$last" in *"quarterly report"*) reply='Plan:\n1. Gather the numbers\n2. Write the summary';; *) reply='DIRECT';; esac;;
  *)
    case "$last" in
      *"fail please"*) echo "model overloaded" >&2; exit 1;;
      *"call Juan"*) reply='Sure. SCHEDULE: Call Juan | 2030-06-02T17:00:00 | once';;
      *) reply="echo: $last";;
    esac;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1,"usage":{"input_tokens":10,"output_tokens":5},"total_cost_usd":0.002}\n' "$reply"
`)
}

// Recorded turns of every kind re-run identical; a changed prompt section
// shows a difference; a live re-run writes nothing to the live store.
func TestRerunRecordedTurns(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			vars := baseVars(t, b, rerunClaude(t))
			vars["OMEGA_CLASSIFY"], vars["OMEGA_TIMEZONE"], vars["OMEGA_PROVIDER_MAX_RETRIES"] = "true", "UTC", "0"
			testchat := &fakeChannel{name: "testchat"}
			auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"allowed"}}}
			n := startNodeWith(t, vars, app.RuntimeOptions{Channels: []channels.Channel{testchat}, Auth: auth})
			ctx := context.Background()

			kinds := map[string]string{}
			for kind, text := range map[string]string{"direct": "hello there", "markers": "please call Juan tomorrow",
				"plan": "write the quarterly report", "command": "/help", "failed": "fail please"} {
				out := say(t, n, "ana", text, "30s")
				if out.TurnID == "" || out.Status == "pending" {
					t.Fatalf("%s turn: %+v", kind, out)
				}
				kinds[kind] = out.TurnID
			}
			if err := n.rt.Deliver(ctx, channels.Incoming{Channel: "testchat", SenderID: "stranger", Text: "let me in"}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the stranger's answer", func() bool { return len(testchat.texts("stranger")) == 1 })
			kinds["denied"] = lastTurnOf(t, n, "testchat", "stranger")
			mustHave(t, n, kinds["plan"], "PlanStepCompleted")
			mustHave(t, n, kinds["markers"], "MarkersApplied")
			mustHave(t, n, kinds["failed"], "ProviderFailed")
			// A reply is sent before it is recorded with what was decided
			// before it, so the stranger may read the denial first.
			waitFor(t, "the denied turn's completion", func() bool {
				return countType(turnEvents(t, n, kinds["denied"]), completed) == 1
			})
			mustHave(t, n, kinds["denied"], "AccessDenied")
			mustHave(t, n, kinds["command"], "CommandAnswered")

			cfg, err := config.LoadFrom(vars)
			if err != nil {
				t.Fatal(err)
			}
			for kind, id := range kinds {
				start := time.Now()
				res, err := rerun.Run(ctx, n.rt.Store, n.rt.Registry, cfg, id, rerun.Options{})
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				t.Logf("re-ran the %s turn in %s", kind, time.Since(start).Round(time.Millisecond))
				if !res.Identical {
					t.Errorf("%s turn re-ran differently:\n%s", kind, strings.Join(res.Diff, "\n"))
				}
			}

			// A changed prompt section is a different decision.
			prompts := t.TempDir()
			system, err := os.ReadFile(filepath.Join("..", "prompts", "defaults", "SYSTEM_PROMPT.md"))
			if err != nil {
				t.Fatal(err)
			}
			pirate := strings.Replace(string(system), "## Identity\n", "## Identity\nYou are a pirate.\n", 1)
			if err := os.WriteFile(filepath.Join(prompts, "SYSTEM_PROMPT.md"), []byte(pirate), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := rerun.Run(ctx, n.rt.Store, n.rt.Registry, cfg, kinds["direct"], rerun.Options{PromptsDir: prompts})
			if err != nil {
				t.Fatal(err)
			}
			if res.Identical || !strings.Contains(strings.Join(res.Diff, "\n"), "pirate") {
				t.Fatalf("a changed prompt re-ran identical: %q", res.Diff)
			}

			// Live: the configured provider is called; the live log does not move.
			before := headOf(t, n)
			res, err = rerun.Run(ctx, n.rt.Store, n.rt.Registry, cfg, kinds["markers"], rerun.Options{Live: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Identical {
				t.Errorf("live re-run of a deterministic provider differs:\n%s", strings.Join(res.Diff, "\n"))
			}
			if after := headOf(t, n); after != before {
				t.Fatalf("a live re-run wrote to the live store: head %d -> %d", before, after)
			}
		})
	}
}

func mustHave(t *testing.T, n *node, turn, typ string) {
	t.Helper()
	for _, e := range turnEvents(t, n, turn) {
		if e.Type == typ {
			return
		}
	}
	t.Fatalf("turn %s has no %s", turn, typ)
}

func lastTurnOf(t *testing.T, n *node, channel, snd string) string {
	t.Helper()
	// The reply is sent before the turns read model follows, so wait for it.
	var id string
	waitFor(t, "the turn in the turns read model", func() bool {
		err := n.rt.DBForTests().QueryRow(`SELECT turn_id FROM turns WHERE sender = $1 ORDER BY arrival DESC LIMIT 1`, sender.SenderKey(channel, snd)).Scan(&id)
		return err == nil
	})
	return id
}

func headOf(t *testing.T, n *node) int64 {
	t.Helper()
	var head int64
	if err := n.rt.DBForTests().QueryRow(`SELECT COALESCE(max(position), 0) FROM events`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	return head
}
