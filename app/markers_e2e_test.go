package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

// scriptedClaude writes a Claude Code double whose reply depends on the
// user's message: a message containing a key of replies gets that reply
// (which may carry markers); anything else gets "echo: <last line>".
// Every call is logged as "<last line>".
func scriptedClaude(t *testing.T, replies map[string]string) (bin, callLog string) {
	t.Helper()
	dir := t.TempDir()
	callLog = filepath.Join(dir, "calls.log")
	var cases strings.Builder
	for k, v := range replies {
		cases.WriteString("  *'" + k + "'*) reply='" + v + "';;\n")
	}
	script := `echo "$last" >> "` + callLog + `"
reply="echo: $last"
case "$prompt" in
` + cases.String() + `esac
reply=$(printf '%s' "$reply" | sed ':a;N;$!ba;s/\n/\\n/g')
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$reply"
`
	bin = writeClaude(t, dir, script)
	return bin, callLog
}

func TestMarkersOverHTTP(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := scriptedClaude(t, map[string]string{
				"call Juan":     `Sure, I will remind you. SCHEDULE: Call Juan | 2030-06-02T17:00:00 | once`,
				"speak Spanish": `Claro. LANG_SWITCH: Spanish`,
				"forget facts":  `Done.\nPURGE_FACTS`,
			})
			vars := baseVars(t, b, claude)
			vars["OMEGA_TIMEZONE"] = "UTC"
			n := startNode(t, vars)
			ctx := context.Background()

			out := say(t, n, "ana", "Schedule for tomorrow to call Juan at 5pm", "20s")
			if out.Status != turn.StatusOK {
				t.Fatalf("schedule turn: %+v", out)
			}
			if strings.Contains(out.Reply, "SCHEDULE") || !strings.HasPrefix(out.Reply, "Sure, I will remind you.") {
				t.Fatalf("reply = %q", out.Reply)
			}
			want := i18n.Text(i18n.English, i18n.TaskScheduled, "Call Juan", "Sun 2 Jun 2030 17:00 UTC")
			if !strings.Contains(out.Reply, want) {
				t.Fatalf("reply %q lacks the confirmation %q", out.Reply, want)
			}
			evs := turnEvents(t, n, out.TurnID)
			if countType(evs, "MarkersApplied") != 1 {
				t.Fatalf("no MarkersApplied on the turn")
			}
			waitFor(t, "the task row", func() bool {
				return queryInt(t, n, `SELECT count(*) FROM tasks WHERE sender = 'http-ana' AND description = 'Call Juan' AND kind = 'reminder' AND repeat = 'once' AND status = 'pending'`) == 1
			})

			// Asking again warns about the near-duplicate.
			out = say(t, n, "ana", "please call Juan reminder again", "20s")
			if !strings.Contains(out.Reply, "⚠") {
				t.Fatalf("no duplicate warning in %q", out.Reply)
			}

			// /tasks lists them; /cancel by prefix cancels one.
			out = say(t, n, "ana", "/tasks", "20s")
			if out.Status != turn.StatusCommand || strings.Count(out.Reply, "Call Juan") != 2 {
				t.Fatalf("/tasks = %+v", out)
			}
			id := out.Reply[strings.Index(out.Reply, "[")+1 : strings.Index(out.Reply, "]")]
			out = say(t, n, "ana", "/cancel "+id, "20s")
			if out.Reply != i18n.Text(i18n.English, i18n.TaskCancelled, "Call Juan") {
				t.Fatalf("/cancel = %q", out.Reply)
			}

			// LANG_SWITCH switches later texts.
			out = say(t, n, "ana", "please speak Spanish", "20s")
			if out.Reply != "Claro." {
				t.Fatalf("lang switch reply = %q", out.Reply)
			}
			out = say(t, n, "ana", "/tasks", "20s")
			if !strings.HasPrefix(out.Reply, "Tus tareas pendientes") {
				t.Fatalf("/tasks after LANG_SWITCH = %q", out.Reply)
			}
			out = say(t, n, "ana", "/status", "20s")
			if !strings.Contains(out.Reply, "Tiempo activo") {
				t.Fatalf("/status after LANG_SWITCH = %q", out.Reply)
			}

			// PURGE_FACTS purges.
			for _, kv := range [][2]string{{"city", "Lisbon"}, {"pet", "cat"}} {
				if _, err := n.rt.Driver.Senders.Decide(ctx, "http", "ana", domain.Metadata{}, func(p sender.SenderProfile) ([]domain.Payload, error) {
					return p.RecordFact(kv[0], kv[1], "user")
				}); err != nil {
					t.Fatal(err)
				}
			}
			out = say(t, n, "ana", "please forget facts", "20s")
			if out.Reply != "Done." {
				t.Fatalf("purge reply = %q", out.Reply)
			}
			p, err := n.rt.Driver.Senders.Load(ctx, "http", "ana")
			if err != nil || len(p.Facts) != 0 {
				t.Fatalf("facts after PURGE_FACTS: %v %v", p.Facts, err)
			}

			if err := n.rt.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "projections", func() bool {
				return queryInt(t, n, `SELECT count(*) FROM tasks WHERE status = 'cancelled'`) == 1
			})
			diffs, err := n.rt.Engine.Verify(ctx, app.Projections(), nil)
			if err != nil || len(diffs) > 0 {
				t.Fatalf("verify: %v %+v", err, diffs)
			}
		})
	}
}
