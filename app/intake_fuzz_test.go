package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// FuzzAPIMessagesSQLite and FuzzAPIMessagesPostgres post arbitrary
// messages to a running omega: each must get a 4xx or complete its turn,
// and the read models must reach the log's head afterwards (one bad
// message must not stop a projection). Their seed corpus runs with the
// ordinary tests.
func FuzzAPIMessagesSQLite(f *testing.F) { fuzzAPIMessages(f, map[string]string{}) }

func FuzzAPIMessagesPostgres(f *testing.F) {
	fuzzAPIMessages(f, map[string]string{"OMEGA_DATABASE_URL": pgtest.DSN(f)})
}

func fuzzAPIMessages(f *testing.F, env map[string]string) {
	long := strings.Repeat("9", 2800)
	for _, s := range []struct {
		raw                bool
		sender, name, text string
	}{
		{false, "alice", "Alice", "hello"},
		{false, long, "", "long sender"},
		{false, "nul\x00id", "", "nul in sender id"},
		{false, "bob", "B\x00b", "nul in name"},
		{false, "carol", "", "nul\x00in text"},
		{false, "dave", "", "/help"},
		{false, "erin", "\x1b[31m", "control \x1b in text"},
		{false, "frank", "", strings.Repeat("é", 60_000)},
		{false, " ", "", "blank sender"},
		{false, "gina", "", "SCHEDULE: hack | tomorrow | x"},
		{true, `{"sender_id":"h","text":"hi"}`, ` {"sender_id":"h","text":"again"}`, ""},
		{true, `{"sender_id":"h","text":"hi"`, "", ""},
		{true, `{"sender_id":"h","text":"caf`, "\xe9", `"}`},
		{true, `[]`, "", ""},
	} {
		f.Add(s.raw, s.sender, s.name, s.text)
	}
	// A Claude Code double that answers at once, whatever it was asked.
	bin := f.TempDir() + "/claude"
	script := "#!/bin/sh\nprintf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\",\"session_id\":\"s1\",\"num_turns\":1,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\\n'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		f.Fatal(err)
	}
	vars := map[string]string{
		"OMEGA_DATA_DIR": f.TempDir(), "OMEGA_CLAUDE_BIN": bin, "OMEGA_LEASE_TTL": "2s",
		"OMEGA_STATUS_FIRST": "0s", "OMEGA_CLASSIFY": "false", "HOME": f.TempDir(), "PATH": os.Getenv("PATH"),
	}
	for k, v := range env {
		vars[k] = v
	}
	n := startNodeWith(f, vars, app.RuntimeOptions{Auth: &pipeline.Auth{}})
	f.Fuzz(func(t *testing.T, raw bool, sender, name, text string) {
		body := []byte(sender + name + text)
		if !raw {
			body, _ = json.Marshal(map[string]string{"sender_id": sender, "sender_name": name, "text": text})
		}
		resp, err := client.Post(n.url+"/api/messages?wait=30s", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			var e struct{ Error string }
			if json.Unmarshal(reply, &e) != nil || e.Error == "" {
				t.Fatalf("%d without a JSON error: %s", resp.StatusCode, reply)
			}
		case resp.StatusCode == http.StatusOK:
			var out api.TurnOut
			if err := json.Unmarshal(reply, &out); err != nil || out.Status == "pending" || out.Status == "" {
				t.Fatalf("turn not completed: %s (%v)", reply, err)
			}
			// The turns read model shows it completed: it kept up.
			waitFor(t, "turn "+out.TurnID+" completed in the read model", func() bool {
				return queryInt(t, n, "SELECT count(*) FROM turns WHERE turn_id = $1 AND status <> 'open'", out.TurnID) == 1
			})
		default:
			t.Fatalf("status %d for %q: %s", resp.StatusCode, body, reply)
		}
		waitProjectionsAtHead(t, n)
	})
}

// waitProjectionsAtHead waits until no projection has an event left to
// apply: each checkpoint has reached the head of the log (as far as a
// reader sees it: on PostgreSQL an open transaction elsewhere in the
// cluster can hide the newest events for a while).
func waitProjectionsAtHead(t *testing.T, n *node) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sts, err := n.rt.Engine.Statuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		behind := false
		for _, st := range sts {
			evs, err := n.rt.Store.ReadAll(ctx, st.Position, 1)
			if err != nil {
				t.Fatal(err)
			}
			behind = behind || len(evs) > 0
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("projections stalled below the log head: %+v", sts)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
