package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/handlers/effects"
)

// On PostgreSQL a running omega handles a CancelTask that another process
// (with no handlers of its own) sends, and the sender's Wait returns.
func TestRunningOmegaHandlesACommandSentElsewhere(t *testing.T) {
	claude, _ := fakeClaude(t)
	vars := baseVars(t, backends()[1], claude)
	startNode(t, vars)

	s, err := postgres.Open(context.Background(), vars["OMEGA_DATABASE_URL"], postgres.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := app.NewRegistry()
	ctx := context.Background()
	const id = "abcdef12-0000-4000-8000-000000000002"
	ev, err := domain.NewEventFrom(task.TaskScheduled{ID: id, Description: "Call Ana", Due: time.Now().Add(time.Hour),
		Kind: task.TaskKindReminder, Channel: "testchat", SenderID: "allowed", ChatID: "allowed"}, domain.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, task.TaskStream(id), eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}

	b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: reg, Logger: quiet, Announcer: s})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cmd, err := b.Send(ctx, &effects.CancelTask{TaskID: id, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := messaging.Wait(ctx, s, reg, cmd, 10*time.Second); err != nil {
		t.Fatalf("wait: %v", err)
	}
	evs, err := s.Load(ctx, task.TaskStream(id), 0)
	if err != nil || len(evs) != 2 || evs[1].Type != "TaskCancelled" {
		t.Fatalf("task stream %v, %v", evs, err)
	}
}
