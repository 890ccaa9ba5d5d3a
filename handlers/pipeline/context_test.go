package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/promptstore"
)

// Pending tasks reach the prompt, and so do lessons and outcomes: a
// project's only while it is active (labelled, before the general ones),
// general ones everywhere.
func TestContextCarriesTasksAndProjectScopedLearning(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	due := time.Date(2030, 6, 2, 17, 0, 0, 0, time.UTC)
	f.appendTo(t, task.TaskStream("task-1"), 0, task.TaskScheduled{ID: "task-1", Description: "Call Juan", Due: due, Repeat: "once", Kind: "reminder", Channel: chanName, SenderID: senderID})
	lrn := learning.LearningStream(chanName + "-" + senderID)
	f.appendTo(t, lrn, 0,
		learning.LessonLearned{Domain: "style", Rule: "answer in bullet points"},
		learning.LessonLearned{Domain: "deploy", Rule: "never deploy on fridays", Project: "shop"},
		learning.RewardRecorded{Score: 1, Domain: "style", Lesson: "short answers land well"},
	)
	if err := f.engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	id := f.turn(t, message("remind me what is scheduled tomorrow"))
	var built turn.ContextBuilt
	for _, p := range ofType[turn.ContextBuilt](f.events(t, domain.TurnStream(id))) {
		full, err := promptstore.Resolve(ctx, f.store, f.reg, id, p)
		if err != nil {
			t.Fatal(err)
		}
		built = full
	}
	for _, want := range []string{"Call Juan", "answer in bullet points"} {
		if !strings.Contains(built.System, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, built.System)
		}
	}
	if strings.Contains(built.System, "never deploy on fridays") {
		t.Errorf("a lesson of project shop leaked into a turn outside it")
	}

	f.appendSender(t, sender.ProjectActivated{Project: "shop"})
	id = f.turn(t, message("what did you learn"))
	for _, p := range ofType[turn.ContextBuilt](f.events(t, domain.TurnStream(id))) {
		full, err := promptstore.Resolve(ctx, f.store, f.reg, id, p)
		if err != nil {
			t.Fatal(err)
		}
		built = full
	}
	shop, general := strings.Index(built.System, "[shop] [deploy] never deploy on fridays"), strings.Index(built.System, "[style] answer in bullet points")
	if shop < 0 || general < 0 || shop > general {
		t.Errorf("in project shop, its lesson (at %d) must come before the general one (at %d):\n%s", shop, general, built.System)
	}
}

// In a group the prompt lists only the sender's tasks set in that group:
// the group's session is shared by its members, and a private reminder is
// not theirs to see.
func TestGroupContextListsOnlyTheGroupsTasks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	due := time.Date(2030, 6, 2, 17, 0, 0, 0, time.UTC)
	f.appendTo(t, task.TaskStream("task-p"), 0, task.TaskScheduled{ID: "task-p", Description: "See the doctor", Due: due, Repeat: "once", Kind: "reminder", Channel: chanName, SenderID: senderID, ChatID: senderID})
	f.appendTo(t, task.TaskStream("task-g"), 0, task.TaskScheduled{ID: "task-g", Description: "Book the team dinner", Due: due, Repeat: "once", Kind: "reminder", Channel: chanName, SenderID: senderID, ChatID: "group-1"})
	if err := f.engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	m := message("what is scheduled tomorrow")
	m.ChatID, m.IsGroup = "group-1", true
	id := f.turn(t, m)
	var built turn.ContextBuilt
	for _, p := range ofType[turn.ContextBuilt](f.events(t, domain.TurnStream(id))) {
		full, err := promptstore.Resolve(ctx, f.store, f.reg, id, p)
		if err != nil {
			t.Fatal(err)
		}
		built = full
	}
	if !strings.Contains(built.System, "Book the team dinner") || strings.Contains(built.System, "See the doctor") {
		t.Fatalf("the group's prompt should list its task and not the private one:\n%s", built.System)
	}
}
