package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// openCLIStore points omega at a fresh store of backend and opens it for
// the test to seed; the caller closes it.
func openCLIStore(t *testing.T, backend string) eventstore.Store {
	t.Helper()
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	if backend == "postgres" {
		t.Setenv("OMEGA_DATABASE_URL", pgtest.DSN(t))
	}
	return reopenCLIStore(t, backend)
}

// reopenCLIStore opens the store openCLIStore pointed omega at.
func reopenCLIStore(t *testing.T, backend string) eventstore.Store {
	t.Helper()
	var s eventstore.Store
	var err error
	if backend == "postgres" {
		s, err = postgres.Open(context.Background(), os.Getenv("OMEGA_DATABASE_URL"), postgres.Options{})
	} else {
		s, err = sqlite.Open(context.Background(), filepath.Join(os.Getenv("OMEGA_DATA_DIR"), "omega.db"), sqlite.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedAuditStore points omega at a fresh store of backend holding one turn
// of every kind.
func seedAuditStore(t *testing.T, backend string) []audittest.Turn {
	t.Helper()
	s := openCLIStore(t, backend)
	defer s.Close()
	turns := audittest.Turns()
	for _, turn := range turns {
		audittest.Append(t, s, turn)
	}
	return turns
}

// omegaOut runs omega and returns its stdout and stderr apart.
func omegaOut(t *testing.T, args ...string) (string, string) {
	t.Helper()
	root := rootCmd()
	var out, errs bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errs)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("omega %v: %v\n%s%s", args, err, out.String(), errs.String())
	}
	return out.String(), errs.String()
}

func TestAuditCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			turns := seedAuditStore(t, backend)

			// CSV: a header, then messages with commas, quotes and newlines
			// that read back exactly.
			out, _ := omegaOut(t, "audit", "--format", "csv", "--sender", "telegram:ana", "--status", "answered", "--grep", "WORLD")
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatalf("csv: %v\n%s", err, out)
			}
			if len(recs) != 2 || recs[0][0] != "turn_id" || recs[0][len(recs[0])-2] != "input" {
				t.Fatalf("csv records %q", recs)
			}
			row := recs[1]
			if row[0] != turns[0].ID || row[len(row)-2] != turns[0].Text || row[len(row)-1] != "Sure, \"done\"\nline two" {
				t.Fatalf("csv row %q", row)
			}

			// JSON is one array; a page says how to get the next.
			out, errs := omegaOut(t, "audit", "--format", "json", "--limit", "4", "--since", "1h")
			var rows []auditlog.Row
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 {
				t.Fatalf("json (%v): %s", err, out)
			}
			next, ok := strings.CutPrefix(strings.TrimSpace(errs), "more: --after ")
			if !ok {
				t.Fatalf("no cursor on stderr: %q", errs)
			}
			out, errs = omegaOut(t, "audit", "--format", "json", "--limit", "4", "--after", next)
			var rest []auditlog.Row
			if err := json.Unmarshal([]byte(out), &rest); err != nil || len(rest) != 3 || errs != "" || rest[0].TurnID == rows[3].TurnID {
				t.Fatalf("second page (%v, %q): %s", err, errs, out)
			}

			out, _ = omegaOut(t, "audit", "--status", "denied")
			if !strings.Contains(out, "whatsapp:stranger") || strings.Contains(out, "telegram:ana") || !strings.Contains(out, "STATUS") {
				t.Fatalf("table of denied turns:\n%s", out)
			}

			// Rows say the status the filter asked for, in the README's words.
			out, _ = omegaOut(t, "audit", "--status", "answered", "--format", "json")
			var answered []auditlog.Row
			if err := json.Unmarshal([]byte(out), &answered); err != nil || len(answered) == 0 {
				t.Fatalf("answered (%v): %s", err, out)
			}
			for _, r := range answered {
				if r.Sender != r.Channel+":"+r.SenderID {
					t.Errorf("sender written %q, want channel:id", r.Sender)
				}
				if r.Status != "answered" || (r.Outcome != "ok" && r.Outcome != "command") {
					t.Errorf("an answered turn shown as %q (outcome %q)", r.Status, r.Outcome)
				}
			}

			out, _ = omegaOut(t, "audit", "--stats", "--by", "sender", "--format", "json")
			var stats []auditlog.Stats
			if err := json.Unmarshal([]byte(out), &stats); err != nil || len(stats) != 4 {
				t.Fatalf("stats (%v): %s", err, out)
			}
			for _, s := range stats {
				if s.Group == "telegram:ana" && (s.Turns != 3 || s.InputTokens != 180 || s.Reported != 2) {
					t.Errorf("ana's stats %+v", s)
				}
			}
			out, _ = omegaOut(t, "audit", "--stats")
			if !strings.Contains(out, "P95") || !strings.Contains(out, "(2 of 7 turns reported)") {
				t.Fatalf("stats table:\n%s", out)
			}
		})
	}
}

func TestAuditCLIRejectsBadFilters(t *testing.T) {
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	for _, args := range [][]string{{"--since", "yesterday"}, {"--sender", "ana"}, {"--status", "happy"}, {"--limit", "0"}, {"--format", "xml"}, {"--stats", "--by", "week"}} {
		root := rootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"audit"}, args...))
		if err := root.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "bad audit filter") {
			t.Errorf("audit %v: err %v", args, err)
		}
	}
}

// A turn whose recorded events the driver would not produce (this one was
// written by hand, without the welcome a first message gets) re-runs with
// a difference: exit 3 and the diff.
func TestRerunCLIDiffers(t *testing.T) {
	turns := seedAuditStore(t, "sqlite")
	root := rootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"rerun", turns[0].ID})
	err := root.ExecuteContext(context.Background())
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != exitDiffers {
		t.Fatalf("err %v, want exit 3\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "- ") || !strings.Contains(out.String(), "+ ") {
		t.Fatalf("no diff:\n%s", out.String())
	}
}

// omega export writes the sender's exchanges from the log, as JSON lines
// with models and tokens, or as a Markdown transcript.
func TestExportCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			turns := seedAuditStore(t, backend)
			out, _ := omegaOut(t, "export", "--sender", "telegram:ana", "--format", "jsonl")
			var msgs []map[string]any
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				msgs = append(msgs, m)
			}
			// Three turns of ana, each a message and a reply.
			if len(msgs) != 6 || msgs[0]["text"] != turns[0].Text || msgs[1]["text"] != "Sure" || msgs[1]["model"] != "sonnet" ||
				msgs[1]["input_tokens"] != float64(120) || msgs[3]["text"] != "week planned" || msgs[5]["input_tokens"] != nil {
				t.Fatalf("jsonl:\n%s", out)
			}
			out, _ = omegaOut(t, "export", "--sender", "telegram:ana", "--conversation", "c1")
			if !strings.HasPrefix(out, "# telegram:ana\n\n## Conversation c1\n") || !strings.Contains(out, "> hello, \"world\"\n> second line") ||
				!strings.Contains(out, "**omega** (sonnet)") {
				t.Fatalf("markdown:\n%s", out)
			}
		})
	}
}

// wholeLog is every event in s once the transactions running now have
// ended: a PostgreSQL store's ReadAll holds back what any transaction of
// the cluster that began earlier may still precede, and other packages'
// tests share the cluster.
func wholeLog(t *testing.T, s eventstore.Store) []domain.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := s.ReadAll(ctx, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
