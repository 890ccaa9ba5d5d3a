package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// omega tasks list shows what is scheduled (as JSON too); omega tasks
// cancel records the cancellation, and the task leaves the list.
func TestTasksCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Setenv("OMEGA_TIMEZONE", "UTC")
			s := openCLIStore(t, backend)
			due := time.Date(2030, 5, 31, 9, 0, 0, 0, time.UTC)
			seedTask(t, s, "abcdef12-0000-4000-8000-000000000001", "Call Juan", due)
			s.Close()

			out := runOmega(t, "tasks", "list", "--json")
			var listed []struct {
				Sender      string    `json:"sender"`
				Description string    `json:"description"`
				Due         time.Time `json:"due"`
				Repeat      string    `json:"repeat"`
				Status      string    `json:"status"`
			}
			if err := json.Unmarshal([]byte(out), &listed); err != nil {
				t.Fatalf("list --json: %v\n%s", err, out)
			}
			if len(listed) != 1 || listed[0].Description != "Call Juan" || listed[0].Status != "pending" || !listed[0].Due.Equal(due) ||
				listed[0].Repeat != "monthly" || listed[0].Sender != "telegram:42" {
				t.Fatalf("listed %+v", listed)
			}
			if out := runOmega(t, "tasks", "list"); !strings.Contains(out, "2030-05-31 09:00 UTC") || !strings.Contains(out, "abcdef12") {
				t.Fatalf("list:\n%s", out)
			}
			if out := runOmega(t, "tasks", "cancel", "abcdef"); !strings.Contains(out, "cancelled abcdef12: Call Juan") {
				t.Fatalf("cancel: %s", out)
			}
			if out := runOmega(t, "tasks", "list", "--json"); strings.TrimSpace(out) != "[]" {
				t.Fatalf("after cancel: %s", out)
			}
			if out := runOmega(t, "tasks", "list", "--all", "--json"); !strings.Contains(out, `"status": "cancelled"`) {
				t.Fatalf("list --all: %s", out)
			}
		})
	}
}

func runOmega(t *testing.T, args ...string) string {
	t.Helper()
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("omega %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}
