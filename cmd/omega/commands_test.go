package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
)

// seedTask records a pending monthly reminder with the given id.
func seedTask(t *testing.T, s eventstore.Store, id, description string, due time.Time) {
	t.Helper()
	ev, err := domain.NewEventFrom(task.TaskScheduled{ID: id, Description: description,
		Due: due, Repeat: task.RepeatMonthly, Kind: task.TaskKindReminder, Channel: "telegram", SenderID: "42", ChatID: "42"},
		domain.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), task.TaskStream(id), eventstore.NoStream, ev); err != nil {
		t.Fatal(err)
	}
}

// commandOutcomes returns the command outcomes in the log, in order.
func commandOutcomes(t *testing.T, backend string) (handled, failed []string) {
	t.Helper()
	s := reopenCLIStore(t, backend)
	defer s.Close()
	evs := wholeLog(t, s)
	for _, e := range evs {
		switch e.Type {
		case "CommandHandled":
			handled = append(handled, string(e.Data))
		case "CommandFailed":
			failed = append(failed, string(e.Data))
		}
	}
	return handled, failed
}

// omega facts set|rm|purge and tasks cancel send commands on the bus: each
// has its CommandHandled in the log, and its effect is in the read models.
func TestCLIStateChangesAreCommands(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := openCLIStore(t, backend)
			seedTask(t, s, "abcdef12-0000-4000-8000-000000000001", "Call Juan", time.Date(2030, 5, 31, 9, 0, 0, 0, time.UTC))
			s.Close()

			runOmega(t, "facts", "set", "telegram:42", "city", "Lima")
			runOmega(t, "facts", "set", "telegram", "42", "pet", "cat") // the older form still works
			runOmega(t, "facts", "rm", "telegram:42", "pet")
			if out := runOmega(t, "facts", "list", "telegram:42"); !strings.Contains(out, "telegram:42") || !strings.Contains(out, "Lima") || strings.Contains(out, "cat") {
				t.Fatalf("facts after set and rm:\n%s", out)
			}
			runOmega(t, "facts", "purge", "telegram:42")
			if out := runOmega(t, "facts", "list", "telegram:42"); strings.Contains(out, "Lima") {
				t.Fatalf("facts after purge:\n%s", out)
			}
			if out := runOmega(t, "tasks", "cancel", "abcdef", "--json"); !strings.Contains(out, `"status":"cancelled"`) {
				t.Fatalf("cancel: %s", out)
			}
			if out := runOmega(t, "tasks", "list", "--all", "--json"); !strings.Contains(out, `"status": "cancelled"`) {
				t.Fatalf("list --all: %s", out)
			}

			handled, failed := commandOutcomes(t, backend)
			var names []string
			for _, h := range handled {
				names = append(names, h[strings.Index(h, `"name":`):])
			}
			want := []string{`"name":"RecordFact"}`, `"name":"RecordFact"}`, `"name":"RemoveFact"}`, `"name":"PurgeFacts"}`, `"name":"CancelTask"}`}
			if !slices.Equal(names, want) || len(failed) != 0 {
				t.Fatalf("handled %v, failed %v", handled, failed)
			}
		})
	}
}

// A command its handler rejects makes the CLI fail with the reason, and
// the failure is recorded.
func TestCLIFailedCommand(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			openCLIStore(t, backend).Close()
			root := rootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs([]string{"facts", "set", "telegram", "42", "1234", "x"})
			err := root.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), "only digits") {
				t.Fatalf("facts set with a numeric key = %v\n%s", err, out.String())
			}
			if handled, failed := commandOutcomes(t, backend); len(handled) != 0 || len(failed) != 1 || !strings.Contains(failed[0], "RecordFact") {
				t.Fatalf("handled %v, failed %v", handled, failed)
			}
		})
	}
}
