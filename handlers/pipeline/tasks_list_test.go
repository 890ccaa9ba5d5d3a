package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
)

// /tasks shows each task's next due time in the sender's zone, its
// recurrence and its state: pending, late (due and not fired) or failed
// with the reason; done and cancelled ones are left out.
func TestTasksCommandShowsStatus(t *testing.T) {
	ctx := context.Background()
	r := newMarkerRig(t)
	add := func(id, desc string, due time.Time, repeat string, more ...domain.Payload) {
		ps := append([]domain.Payload{task.TaskScheduled{ID: id, Description: desc, Due: due, Repeat: repeat,
			Kind: task.TaskKindReminder, Channel: "http", SenderID: "ana", ChatID: "ana"}}, more...)
		evs, err := domain.NewEvents(domain.Metadata{}, ps...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.store.Append(ctx, task.TaskStream(id), eventstore.NoStream, evs...); err != nil {
			t.Fatal(err)
		}
	}
	future := time.Date(2030, 6, 2, 7, 0, 0, 0, time.UTC)
	past := time.Now().Add(-time.Hour)
	add("aaaaaaaa-1", "water the plants", future, task.RepeatDaily)
	add("bbbbbbbb-1", "call Juan", past, task.RepeatOnce)
	add("cccccccc-1", "feed the cat", past, task.RepeatOnce,
		task.TaskFired{ID: "cccccccc-1", Occurrence: 1, Due: past},
		task.TaskDeliveryFailed{ID: "cccccccc-1", Occurrence: 1, Attempt: 1, Class: "blocked", Error: "bot was blocked", Final: true})
	add("dddddddd-1", "done already", past, task.RepeatOnce,
		task.TaskFired{ID: "dddddddd-1", Occurrence: 1, Due: past},
		task.TaskDelivered{ID: "dddddddd-1", Occurrence: 1, Attempt: 1})
	if err := r.engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	ans, err := r.cmds.Answer(ctx, markerTurn("t1", "/tasks"), sender.SenderProfile{Facts: map[string]string{"timezone": "Europe/Madrid"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[aaaaaaaa] water the plants — next Sun 2 Jun 2030 09:00 CEST (daily, reminder) · pending",
		"[bbbbbbbb] call Juan", "· late",
		"[cccccccc] feed the cat", "· failed: bot was blocked",
	} {
		if !strings.Contains(ans.Reply, want) {
			t.Errorf("/tasks lacks %q:\n%s", want, ans.Reply)
		}
	}
	if strings.Contains(ans.Reply, "done already") {
		t.Errorf("/tasks lists a done task:\n%s", ans.Reply)
	}
}
