package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/asof"
)

// recordedContext is the ContextBuilt a turn recorded.
func recordedContext(t *testing.T, s interface {
	Load(context.Context, string, int64) ([]domain.Event, error)
}, id string) turn.ContextBuilt {
	t.Helper()
	evs, err := s.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == (turn.ContextBuilt{}).EventType() {
			p, err := app.NewRegistry().Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			return p.(turn.ContextBuilt)
		}
	}
	t.Fatalf("turn %s built no context", id)
	return turn.ContextBuilt{}
}

// omega state, the built binary beside omega serve, with the user's
// environment: at a turn it prints what that turn's context recorded; at
// a wall-clock time in the owner's zone, the facts of that time; without
// --at, now's; a bad --at is refused with what it accepts.
func TestStateCLI(t *testing.T) {
	eachShutdownBackend(t, []string{"OMEGA_TIMEZONE=Europe/Lisbon"}, func(t *testing.T, bin string, e shutdownEnv, _ *proc) {
		env := append(e.env, "OMEGA_TIMEZONE=Europe/Lisbon")
		run := func(args ...string) string {
			t.Helper()
			out, errs, err := runBin(t, bin, env, args...)
			if err != nil {
				t.Fatalf("omega %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
			}
			return out
		}
		first := postMessage(t, e.url, "alice", "hello", "30s")
		run("facts", "set", "http:alice", "city", "Lisbon")
		time.Sleep(1100 * time.Millisecond) // the wall-clock form has whole seconds
		lisbon := time.Now()
		time.Sleep(1100 * time.Millisecond)
		second := postMessage(t, e.url, "alice", "and again", "30s")
		run("facts", "set", "http:alice", "city", "Porto")

		var st asof.State
		id := second["turn_id"].(string)
		if err := json.Unmarshal([]byte(run("state", "--sender", "http:alice", "--at", id, "--json")), &st); err != nil {
			t.Fatal(err)
		}
		c := recordedContext(t, e.open(), id)
		if len(st.Facts) != c.FactsCount || len(st.Facts) != 1 || st.Facts[0] != [2]string{"city", "Lisbon"} {
			t.Errorf("facts at the second turn: %v, its context counted %d", st.Facts, c.FactsCount)
		}
		if st.Next.ConversationID != c.ConversationID || st.Next.ConversationID != first["turn_id"] || st.Next.Session != c.SessionID || c.SessionID == "" {
			t.Errorf("at the second turn: next %+v, its context: conversation %s session %s", st.Next, c.ConversationID, c.SessionID)
		}
		if st.Language != c.Language {
			t.Errorf("language %q, its context %q", st.Language, c.Language)
		}

		wall := lisbon.In(mustZone(t, "Europe/Lisbon")).Format("2006-01-02 15:04:05")
		out := run("state", "--sender", "http:alice", "--at", wall)
		for _, want := range []string{"http:alice as of " + wall, "city: Lisbon", "Conversation: " + first["turn_id"].(string), "[user ", "hello", "open: a message then continued it, resuming session s-"} {
			if !strings.Contains(out, want) {
				t.Errorf("state at %s lacks %q:\n%s", wall, want, out)
			}
		}
		if now := run("state", "--sender", "http:alice"); !strings.Contains(now, "city: Porto") || !strings.Contains(now, "and again") {
			t.Errorf("state now:\n%s", now)
		}
		if nobody := run("state", "--sender", "http:bob"); !strings.Contains(nobody, "No profile recorded yet") {
			t.Errorf("state of a stranger:\n%s", nobody)
		}
		_, errs, err := runBin(t, bin, env, "state", "--sender", "http:alice", "--at", "yesterday-ish")
		if err == nil || !strings.Contains(errs, `--at "yesterday-ish" is neither a time`) {
			t.Errorf("a bad --at: %v\n%s", err, errs)
		}
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
