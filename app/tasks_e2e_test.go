package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
)

// taskClaude writes a Claude Code double that schedules a reminder
// ("REMIND") or an action ("ACTNOW") due in two to three seconds, and
// carries out a due action (its prompt ends with the ACTION_OUTCOME
// instruction); anything else is echoed.
func taskClaude(t *testing.T) string {
	t.Helper()
	return writeClaude(t, t.TempDir(), `due=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
case "$last" in
  *ACTION_OUTCOME*) result='The weather is sunny.\nACTION_OUTCOME: success' ;;
  *REMIND*) result="Sure.\nSCHEDULE: Call Juan | $due | once" ;;
  *ACTNOW*) result="On it.\nSCHEDULE_ACTION: Check the weather | $due | once" ;;
  *CANCELME*) result="Sure.\nSCHEDULE: Water the plants | $due | once" ;;
  *BLOCKME*) result="Sure.\nSCHEDULE: Feed the cat | $due | once" ;;
  *) result="echo: $last" ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$result"
`)
}

// A reminder and an action scheduled by the model fire when due, through
// the running pipeline and the Telegram Bot API double.
func TestTasksFireEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, taskClaude(t)), api, "42")
			vars["OMEGA_MODEL_COMPLEX"] = "complex-model"
			n := startTelegramNode(t, vars)

			t.Run("reminder arrives when due", func(t *testing.T) { tgReminderArrives(t, n, api) })
			t.Run("action runs as a turn", func(t *testing.T) { tgActionRuns(t, n, api) })
			t.Run("cancelled reminder never fires", func(t *testing.T) { tgCancelledNeverFires(t, n, api) })
			t.Run("blocked reminder shows as failed", func(t *testing.T) { tgBlockedReminderFailed(t, n, api) })

			ctx := context.Background()
			if err := n.rt.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "projections", func() bool {
				return n.queryInt(t, `SELECT count(*) FROM tasks WHERE firing = 0 AND status = 'done'`) == 2 &&
					n.queryInt(t, `SELECT count(*) FROM tasks WHERE status = 'failed'`) == 1
			})
			diffs, err := n.rt.Engine.Verify(ctx, app.Projections(), nil)
			if err != nil || len(diffs) > 0 {
				t.Fatalf("verify: %v %+v", err, diffs)
			}
		})
	}
}

// taskOf returns the id and due time of the task described as desc.
func (n *tgNode) taskOf(t *testing.T, desc string) (string, time.Time) {
	t.Helper()
	var id string
	var due int64
	waitFor(t, "task "+desc, func() bool {
		err := n.rt.DBForTests().QueryRow(`SELECT id, due_at FROM tasks WHERE description = $1`, desc).Scan(&id, &due)
		return err == nil
	})
	return id, time.UnixMicro(due)
}

func tgReminderArrives(t *testing.T, n *tgNode, api *telegramtest.Server) {
	id := api.PushText(tgUser, tgUser, "REMIND me to call Juan")
	n.waitTurn(t, tgTurnID(tgUser, id))
	taskID, due := n.taskOf(t, "Call Juan")
	var arrived time.Time
	waitFor(t, "the reminder", func() bool {
		for _, m := range api.Messages(tgUser) {
			if strings.Contains(m.Text, "Reminder: Call Juan") {
				arrived = time.Now()
				return true
			}
		}
		return false
	})
	var delivered []domain.Event
	waitFor(t, "the delivery record", func() bool {
		delivered = n.taskEvents(t, taskID, "TaskDelivered")
		return len(delivered) > 0
	})
	if len(delivered) != 1 {
		t.Fatalf("%d deliveries recorded", len(delivered))
	}
	lateness := delivered[0].RecordedAt.Sub(due)
	t.Logf("reminder due %s recorded delivered %v after due (seen by the test %v after)", due.Format(time.RFC3339), lateness, arrived.Sub(due))
	if lateness < 0 || lateness > 3*time.Second {
		t.Fatalf("delivered %v after its due time", lateness)
	}
	p, err := n.rt.Registry.Decode(delivered[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := p.(task.TaskDelivered); d.MaybeDuplicate || len(d.PlatformIDs) != 1 || strings.Contains(d.Text, "late") {
		t.Fatalf("delivery %+v", d)
	}
	count := 0
	for _, m := range api.Messages(tgUser) {
		if strings.Contains(m.Text, "Reminder: Call Juan") {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("reminder sent %d times", count)
	}
}

func tgActionRuns(t *testing.T, n *tgNode, api *telegramtest.Server) {
	id := api.PushText(tgUser, tgUser, "ACTNOW check the weather for me")
	n.waitTurn(t, tgTurnID(tgUser, id))
	taskID, _ := n.taskOf(t, "Check the weather")
	waitFor(t, "the action's result", func() bool {
		for _, m := range api.Messages(tgUser) {
			if m.Text == "The weather is sunny." {
				return true
			}
		}
		return false
	})
	started := n.taskEvents(t, taskID, "TaskActionStarted")
	if len(started) != 1 {
		t.Fatalf("%d action starts recorded", len(started))
	}
	p, err := n.rt.Registry.Decode(started[0])
	if err != nil {
		t.Fatal(err)
	}
	evs := n.waitTurn(t, p.(task.TaskActionStarted).TurnID)
	if m := payload[turn.MessageReceived](t, n, evs); m.Task == nil || m.Task.ID != taskID {
		t.Fatalf("action turn input %+v", m)
	}
	if c := payload[turn.ContextBuilt](t, n, evs); c.Model != "complex-model" {
		t.Fatalf("action model %q", c.Model)
	}
	applied := payload[turn.MarkersApplied](t, n, evs)
	if len(applied.Markers) != 1 || applied.Markers[0].Name != "ACTION_OUTCOME" {
		t.Fatalf("markers %+v", applied.Markers)
	}
}

func (n *tgNode) taskEvents(t *testing.T, taskID, typ string) []domain.Event {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), task.TaskStream(taskID), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// sendAndReply sends text and returns the reply of its turn.
func (n *tgNode) sendAndReply(t *testing.T, api *telegramtest.Server, text string) string {
	t.Helper()
	id := api.PushText(tgUser, tgUser, text)
	evs := n.waitTurn(t, tgTurnID(tgUser, id))
	return payload[turn.ReplySent](t, n, evs).Text
}

func tgCancelledNeverFires(t *testing.T, n *tgNode, api *telegramtest.Server) {
	n.sendAndReply(t, api, "CANCELME water the plants")
	taskID, due := n.taskOf(t, "Water the plants")
	if reply := n.sendAndReply(t, api, "/cancel "+taskID[:8]); !strings.Contains(reply, "Water the plants") {
		t.Fatalf("/cancel replied %q", reply)
	}
	time.Sleep(time.Until(due) + 1500*time.Millisecond)
	for _, m := range api.Messages(tgUser) {
		if strings.Contains(m.Text, "Reminder: Water the plants") {
			t.Fatal("a cancelled reminder was sent")
		}
	}
	if fired := n.taskEvents(t, taskID, "TaskFired"); len(fired) != 0 {
		t.Fatalf("a cancelled task fired: %d", len(fired))
	}
}

// A blocked bot is hopeless: the delivery is recorded as failed at once,
// and /tasks says so.
func tgBlockedReminderFailed(t *testing.T, n *tgNode, api *telegramtest.Server) {
	n.sendAndReply(t, api, "BLOCKME feed the cat")
	taskID, due := n.taskOf(t, "Feed the cat")
	if list := n.sendAndReply(t, api, "/tasks"); !strings.Contains(list, "Feed the cat") || !strings.Contains(list, "pending") {
		t.Fatalf("/tasks before due: %q", list)
	}
	time.Sleep(time.Until(due) - 300*time.Millisecond)
	api.FailNextWith("sendMessage", 1, 403, "Forbidden: bot was blocked by the user")
	waitFor(t, "the failure", func() bool { return len(n.taskEvents(t, taskID, "TaskDeliveryFailed")) == 1 })
	p, err := n.rt.Registry.Decode(n.taskEvents(t, taskID, "TaskDeliveryFailed")[0])
	if err != nil {
		t.Fatal(err)
	}
	if f := p.(task.TaskDeliveryFailed); !f.Final || f.Class != "blocked" {
		t.Fatalf("failure %+v", f)
	}
	waitFor(t, "the read model", func() bool {
		return n.queryInt(t, `SELECT count(*) FROM tasks WHERE id = $1 AND status = 'failed'`, taskID) == 1
	})
	if list := n.sendAndReply(t, api, "/tasks"); !strings.Contains(list, "Feed the cat") || !strings.Contains(list, "failed: ") {
		t.Fatalf("/tasks after the failure: %q", list)
	}
}
