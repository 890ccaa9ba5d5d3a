package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
)

var planSteps = []string{"Gather the data", "Build the report", "Send it"}

// planClaude writes a Claude Code double that classifies a request
// mentioning "quarterly report" as a three-step plan and anything else as
// DIRECT, answers a step with "result of <its last line>" (step 3 adds a
// SCHEDULE marker), and hangs in step 2 while the file hold exists. Every call is logged as its last line.
func planClaude(t *testing.T) (bin, callLog, hold string) {
	t.Helper()
	dir := t.TempDir()
	callLog, hold = filepath.Join(dir, "calls.log"), filepath.Join(dir, "hold")
	script := `echo "$last" >> "` + callLog + `"
case "$prompt" in
  "You route requests"*)
    case "$last" in
      *"quarterly report"*) reply='Plan:\n1. ` + planSteps[0] + `\n2. ` + planSteps[1] + `\n3. ` + planSteps[2] + `';;
      *) reply='DIRECT';;
    esac;;
  *)
    case "$last" in *"` + planSteps[1] + `"*) while [ -e "` + hold + `" ]; do sleep 0.1; done;; esac
    reply="result of $last"
    case "$last" in *"` + planSteps[2] + `"*) reply="$reply SCHEDULE: Follow up on the report | 2030-06-02T17:00:00 | once";; esac;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$reply"
`
	bin = writeClaude(t, dir, script)
	return bin, callLog, hold
}

func planVars(t *testing.T, b backend, claude string) map[string]string {
	vars := baseVars(t, b, claude)
	vars["OMEGA_CLASSIFY"] = "true"
	vars["OMEGA_MODEL_COMPLEX"] = "complex-model"
	vars["OMEGA_TIMEZONE"] = "UTC"
	return vars
}

func stepLine(i int) string {
	return fmt.Sprintf("Step %d of %d: %s", i, len(planSteps), planSteps[i-1])
}

// payloads decodes a turn's events of type T.
func payloads[T domain.Payload](t *testing.T, n *node, id string) []T {
	t.Helper()
	var out []T
	for _, e := range turnEvents(t, n, id) {
		var v T
		if e.Type != v.EventType() {
			continue
		}
		if err := json.Unmarshal(e.Data, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func countCalls(t *testing.T, callLog, line string) int {
	n := 0
	for _, c := range calls(t, callLog) {
		if c == line {
			n++
		}
	}
	return n
}

func verify(t *testing.T, n *node) {
	t.Helper()
	ctx := context.Background()
	if err := n.rt.Engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	diffs, err := n.rt.Engine.Verify(ctx, app.Projections(), nil)
	if err != nil || len(diffs) > 0 {
		t.Fatalf("verify: %v %+v", err, diffs)
	}
}

func TestPlanOverHTTP(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, callLog, _ := planClaude(t)
			n := startNode(t, planVars(t, b, claude))

			out := say(t, n, "ana", "please prepare the quarterly report", "30s")
			want := i18n.More(i18n.English, i18n.PlanDone, 3, 3)
			for i, s := range planSteps {
				want += "\n\n" + i18n.More(i18n.English, i18n.StepDone, i+1, 3, s) + "\nresult of " + stepLine(i+1)
			}
			if out.Status != turn.StatusOK || !strings.HasPrefix(out.Reply, want) {
				t.Fatalf("plan turn = %+v, want reply starting %q", out, want)
			}
			// Step 3's marker was applied, stripped and confirmed.
			confirm := i18n.Text(i18n.English, i18n.TaskScheduled, "Follow up on the report", "Sun 2 Jun 2030 17:00 UTC")
			if strings.Contains(out.Reply, "SCHEDULE") || !strings.Contains(out.Reply, confirm) {
				t.Fatalf("reply %q: want no marker and the confirmation %q", out.Reply, confirm)
			}
			if m := payloads[turn.MarkersApplied](t, n, out.TurnID); len(m) != 1 || m[0].Step != 3 {
				t.Fatalf("MarkersApplied = %+v, want one for step 3", m)
			}
			waitFor(t, "the task row", func() bool {
				return queryInt(t, n, `SELECT count(*) FROM tasks WHERE sender = 'http-ana' AND description = 'Follow up on the report'`) == 1
			})
			list := "1. Gather the data\n2. Build the report\n3. Send it"
			wantProgress := []string{i18n.More(i18n.English, i18n.PlanAnnounce, 3, list)}
			for i, s := range planSteps {
				wantProgress = append(wantProgress, i18n.More(i18n.English, i18n.StepDone, i+1, 3, s))
			}
			var progress []string
			for _, p := range payloads[turn.PlanProgressSent](t, n, out.TurnID) {
				progress = append(progress, p.Text)
			}
			if fmt.Sprint(progress) != fmt.Sprint(wantProgress) {
				t.Fatalf("progress messages:\n%q\nwant:\n%q", progress, wantProgress)
			}
			route := payloads[turn.RouteDecided](t, n, out.TurnID)
			if len(route) != 1 || route[0].Direct || route[0].Model != "complex-model" {
				t.Fatalf("RouteDecided = %+v", route)
			}
			for i := range planSteps {
				if c := countCalls(t, callLog, stepLine(i+1)); c != 1 {
					t.Fatalf("step %d ran %d times", i+1, c)
				}
			}

			// A simple message is answered directly with the fast model, in
			// one provider call: the pre-filter spares the classification.
			before := len(calls(t, callLog))
			out = say(t, n, "ana", "hello there", "30s")
			if out.Reply != "result of hello there" {
				t.Fatalf("direct reply = %q", out.Reply)
			}
			if made := calls(t, callLog)[before:]; len(made) != 1 || made[0] != "hello there" {
				t.Fatalf("an ordinary message made the provider calls %q, want only the answer", made)
			}
			if route := payloads[turn.RouteDecided](t, n, out.TurnID); len(route) != 1 || !route[0].Direct || !route[0].Prefilter {
				t.Fatalf("RouteDecided = %+v", route)
			}
			if c := len(payloads[turn.ProviderCalled](t, n, out.TurnID)); c != 1 {
				t.Fatalf("direct turn called the provider %d times", c)
			}
			if err := n.rt.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			verify(t, n)
		})
	}
}

// A process stopped in step 2 of a plan leaves it to the next process,
// which resumes at step 2: step 1 is never run again.
func TestPlanResumesAfterARestart(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, callLog, hold := planClaude(t)
			if err := os.WriteFile(hold, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			vars := planVars(t, b, claude)
			n1 := startNode(t, vars)
			id := say(t, n1, "ana", "please prepare the quarterly report", "0s").TurnID
			waitFor(t, "step 2 to start", func() bool { return countCalls(t, callLog, stepLine(2)) == 1 })
			n1.stop()
			if err := os.Remove(hold); err != nil {
				t.Fatal(err)
			}

			n2 := startNode(t, vars)
			out := get(t, n2.url+"/api/turns/"+id+"?wait=30s")
			if out.Status != turn.StatusOK || !strings.Contains(out.Reply, "result of "+stepLine(3)) {
				t.Fatalf("turn after the restart = %+v", out)
			}
			for i, want := range []int{1, 2, 1} {
				if c := countCalls(t, callLog, stepLine(i+1)); c != want {
					t.Fatalf("step %d ran %d times, want %d; calls:\n%s", i+1, c, want, strings.Join(calls(t, callLog), "\n"))
				}
			}
			classifications := 0
			for _, c := range calls(t, callLog) {
				if strings.HasPrefix(c, "Request: ") {
					classifications++
				}
			}
			if classifications != 1 {
				t.Fatalf("classified %d times, want once", classifications)
			}
			if done := payloads[turn.PlanStepCompleted](t, n2, id); len(done) != 3 {
				t.Fatalf("PlanStepCompleted = %+v", done)
			}
			if sent := payloads[turn.PlanProgressSent](t, n2, id); len(sent) != 4 {
				t.Fatalf("PlanProgressSent = %+v", sent)
			}
			waitFor(t, "the task row", func() bool {
				return queryInt(t, n2, `SELECT count(*) FROM tasks WHERE description = 'Follow up on the report'`) == 1
			})
			verify(t, n2)
		})
	}
}
