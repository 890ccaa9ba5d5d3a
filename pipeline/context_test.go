package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/promptstore"
)

// Pending tasks reach the prompt, and so do lessons and outcomes: a
// project's only while it is active (labelled, before the general ones),
// general ones everywhere.
func TestContextCarriesTasksAndProjectScopedLearning(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	due := time.Date(2030, 6, 2, 17, 0, 0, 0, time.UTC)
	f.appendTo(t, domain.TaskStream("task-1"), 0, domain.TaskScheduled{ID: "task-1", Description: "Call Juan", Due: due, Repeat: "once", Kind: "reminder", Channel: chanName, SenderID: senderID})
	learning := domain.LearningStream(chanName + "-" + senderID)
	f.appendTo(t, learning, 0,
		domain.LessonLearned{Domain: "style", Rule: "answer in bullet points"},
		domain.LessonLearned{Domain: "deploy", Rule: "never deploy on fridays", Project: "shop"},
		domain.RewardRecorded{Score: 1, Domain: "style", Lesson: "short answers land well"},
	)
	if err := f.engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	id := f.turn(t, message("remind me what is scheduled tomorrow"))
	var built domain.ContextBuilt
	for _, p := range ofType[domain.ContextBuilt](f.events(t, domain.TurnStream(id))) {
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

	f.appendSender(t, domain.ProjectActivated{Project: "shop"})
	id = f.turn(t, message("what did you learn"))
	for _, p := range ofType[domain.ContextBuilt](f.events(t, domain.TurnStream(id))) {
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
