package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/reports"
)

func TestBugsCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := openCLIStore(t, backend)
			ctx := context.Background()
			md := domain.Metadata{Channel: "telegram", Sender: "42"}
			for _, c := range []struct {
				stream string
				p      domain.Payload
			}{
				{learning.BugReportsStream, learning.BugReported{Description: "the reminder fired twice", Sender: "telegram-42"}},
				{learning.LimitationsStream, learning.LimitationReported{Title: "No calendar", Description: "I cannot read calendars", Plan: "add a calendar tool"}},
				{learning.BugReportsStream, learning.BugReported{Description: "a reply was cut", Sender: "telegram-42"}},
			} {
				evs, err := domain.NewEvents(md, c.p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Append(ctx, c.stream, eventstore.Any, evs...); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()

			out, _ := omegaOut(t, "bugs", "--json")
			var got []reports.Report
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(got) != 3 {
				t.Fatalf("reports = %+v", got)
			}
			want := []struct{ kind, text string }{
				{reports.Bug, "a reply was cut"},
				{reports.Limitation, "I cannot read calendars\nadd a calendar tool"},
				{reports.Bug, "the reminder fired twice"},
			}
			for i, w := range want {
				if got[i].Kind != w.kind || got[i].Text != w.text || got[i].Sender != "telegram:42" || got[i].At.IsZero() {
					t.Fatalf("report %d = %+v, want %s %q from telegram:42 (newest first)", i, got[i], w.kind, w.text)
				}
			}
			if got[1].Title != "No calendar" {
				t.Fatalf("limitation title = %q", got[1].Title)
			}

			table, _ := omegaOut(t, "bugs")
			lines := strings.Split(strings.TrimSpace(table), "\n")
			if len(lines) != 4 || !strings.Contains(lines[0], "SENDER") || !strings.Contains(lines[1], "a reply was cut") ||
				!strings.Contains(lines[2], "No calendar: I cannot read calendars / add a calendar tool") {
				t.Fatalf("table:\n%s", table)
			}
		})
	}
}
