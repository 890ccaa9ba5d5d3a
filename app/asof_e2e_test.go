package app_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/handlers/senders"
)

// markerClaude answers "do:TEXT;p=STYLE" with TEXT and the marker
// PERSONALITY: STYLE on its own line (l= LANG_SWITCH, a= PROJECT_ACTIVATE,
// ;deactivate PROJECT_DEACTIVATE, ;forget FORGET_CONVERSATION, s= SCHEDULE: a marker
// the user wrote would be refused as an echo), anything else with "echo: <last line>", on the
// session it was asked to resume (or a new one).
func markerClaude(t *testing.T) string {
	t.Helper()
	return writeClaude(t, t.TempDir(), `case "$last" in *slow*) sleep 2;; esac
case "$last" in
  do:*) reply=$(printf '%s' "${last#do:}" | sed 's/;p=/\\nPERSONALITY: /; s/;l=/\\nLANG_SWITCH: /; s/;a=/\\nPROJECT_ACTIVATE: /; s/;deactivate/\\nPROJECT_DEACTIVATE/; s/;forget/\\nFORGET_CONVERSATION/; s/;s=/\\nSCHEDULE: /');;
  *) reply="echo: $last";;
esac
sess=${resume:-sess-$(date +%s%N)}
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","num_turns":1}\n' "$reply" "$sess"
`)
}

// seenContext is a turn's recorded context with its texts resolved.
func seenContext(t *testing.T, n *node, id string) (turn.ContextBuilt, bool) {
	t.Helper()
	for _, e := range turnEvents(t, n, id) {
		if e.Type != (turn.ContextBuilt{}).EventType() {
			continue
		}
		p, err := n.rt.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		c, err := promptstore.Resolve(context.Background(), n.rt.Store, n.rt.Registry, id, p.(turn.ContextBuilt))
		if err != nil {
			t.Fatal(err)
		}
		return c, true
	}
	return turn.ContextBuilt{}, false
}

// sameAsTheTurn reports how the state at a turn's moment differs from the
// context that turn recorded ("" when it does not).
func sameAsTheTurn(st asof.State, id string, c turn.ContextBuilt) []string {
	var diffs []string
	if c.FactsCount != len(st.Facts) {
		diffs = append(diffs, "facts count")
	}
	for _, f := range st.Facts {
		if !strings.Contains(c.System, "- "+f[0]+": "+f[1]) {
			diffs = append(diffs, "fact "+f[0])
		}
	}
	if st.Personality != "" && !strings.Contains(c.System, st.Personality) ||
		st.Personality == "" && strings.Contains(c.System, "Personality preference") {
		diffs = append(diffs, "personality "+st.Personality)
	}
	// The tasks block is there when the message speaks of tasks.
	seen := c.System + "\n" + c.Prompt
	if !slices.Contains(c.SectionsUsed, promptctx.BlockTasks) {
		seen = ""
	}
	for _, tk := range st.Tasks {
		if seen == "" {
			break
		}
		if !strings.Contains(seen, "["+tk.ID[:8]+"] "+tk.Description) {
			diffs = append(diffs, "task "+tk.Description)
		}
	}
	if seen != "" && len(st.Tasks) == 0 && !strings.Contains(seen, "User's scheduled tasks: none.") {
		diffs = append(diffs, "tasks: none in the state")
	}
	if st.Language != "" && st.Language != c.Language {
		diffs = append(diffs, "language "+st.Language+" vs "+c.Language)
	}
	if st.Project != c.Project {
		diffs = append(diffs, "project "+st.Project+" vs "+c.Project)
	}
	conv := st.Next.ConversationID
	if conv == "" {
		conv = id // the turn starts its own
	}
	if conv != c.ConversationID {
		diffs = append(diffs, "conversation "+conv+" vs "+c.ConversationID)
	}
	if st.Next.Session != c.SessionID {
		diffs = append(diffs, "session "+st.Next.Session+" vs "+c.SessionID)
	}
	return diffs
}

// The state of the moment a turn built its context, folded from the log,
// is what that turn saw: its facts, language, personality, project,
// conversation and resumed session, as its ContextBuilt recorded them,
// across changes made by markers, by commands and by forgetting.
func TestStateAtATurnIsWhatTheTurnSaw(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			vars := baseVars(t, b, markerClaude(t))
			shop := filepath.Join(vars["OMEGA_DATA_DIR"], "projects", "shop")
			if err := os.MkdirAll(shop, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shop, "ROLE.md"), []byte("You run the shop."), 0o644); err != nil {
				t.Fatal(err)
			}
			n := startNode(t, vars)
			ctx := context.Background()
			fact := func(k, v string) {
				if err := n.rt.Senders.RecordFact(ctx, &senders.RecordFact{Channel: "http", SenderID: "alice", Key: k, Value: v, Source: "user"}); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			for _, step := range []string{
				"hello there", "fact city Lisbon", "do:noted;p=a terse pirate", "what do you know", "any reminder pending?",
				"do:claro;l=Spanish", "do:apuntado;s=Call Juan | 2030-01-02T10:00:00Z | once", "qué tarea tengo?", "do:vale;a=shop", "hola en la tienda", "fact pet cat",
				"do:olvidado;forget", "otra vez", "/forget", "y ahora", "do:ok;deactivate", "de vuelta",
			} {
				if kv, ok := strings.CutPrefix(step, "fact "); ok {
					k, v, _ := strings.Cut(kv, " ")
					fact(k, v)
					continue
				}
				out := say(t, n, "alice", step, "30s")
				if out.Status == "pending" || out.TurnID == "" {
					t.Fatalf("%q: %+v", step, out)
				}
				ids = append(ids, out.TurnID)
			}
			states, err := n.rt.States()
			if err != nil {
				t.Fatal(err)
			}
			who := sender.SenderRef{Channel: "http", ID: "alice"}
			seen := map[string]bool{}
			for _, id := range ids {
				c, ok := seenContext(t, n, id)
				if !ok {
					continue // a command builds no context
				}
				m, err := states.TurnMoment(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				st, err := states.At(ctx, who, m)
				if err != nil {
					t.Fatal(err)
				}
				if d := sameAsTheTurn(st, id, c); len(d) > 0 {
					t.Errorf("turn %s (%q): the state at its moment differs from its context: %v\nstate: %+v", id, c.Message, d, st)
				}
				seen["continued"] = seen["continued"] || c.ConversationID != id
				seen["new after the first"] = seen["new after the first"] || c.ConversationID == id && id != ids[0]
				seen["session"] = seen["session"] || c.SessionID != ""
				seen["personality"] = seen["personality"] || st.Personality != ""
				seen["spanish"] = seen["spanish"] || c.Language == "Spanish"
				seen["project"] = seen["project"] || c.Project == "shop"
				seen["two facts"] = seen["two facts"] || c.FactsCount == 2
				seen["task"] = seen["task"] || len(st.Tasks) == 1 && slices.Contains(c.SectionsUsed, promptctx.BlockTasks)
				seen["no task"] = seen["no task"] || len(st.Tasks) == 0 && slices.Contains(c.SectionsUsed, promptctx.BlockTasks)
			}
			for _, want := range []string{"continued", "new after the first", "session", "personality", "spanish", "project", "two facts", "task", "no task"} {
				if !seen[want] {
					t.Errorf("no turn covered %q: %v", want, seen)
				}
			}
			// A turn still waiting for its reply is open, not in the audit:
			// its message is already the conversation's latest.
			slow := say(t, n, "alice", "a slow one", "0s")
			waitFor(t, "the slow turn's context", func() bool { _, ok := seenContext(t, n, slow.TurnID); return ok })
			// The read models index a sender's turns; as omega state does
			// (it opens caught up), let them show the slow turn first: a
			// turn no longer waits for them, so under load they may still
			// be a batch behind its context.
			if err := n.rt.Engine.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			now, err := states.At(ctx, who, asof.Moment{At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if c := now.Conversation; c == nil || len(c.Messages) == 0 || c.Messages[len(c.Messages)-1].Turn != slow.TurnID {
				t.Errorf("the open turn's message is not the conversation's latest: %+v", now.Conversation)
			}
			waitFor(t, "the slow turn", func() bool { return countType(turnEvents(t, n, slow.TurnID), completed) == 1 })
			// Later than the idle time after the last turn, a message starts
			// a new conversation and resumes no session.
			last, err := states.TurnMoment(ctx, ids[len(ids)-1])
			if err != nil {
				t.Fatal(err)
			}
			idle, err := states.At(ctx, who, asof.Moment{At: last.At.Add(2*time.Hour + time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			if idle.Conversation == nil || idle.Next.ConversationID != "" || idle.Next.Session != "" {
				t.Errorf("after the idle time: %+v", idle)
			}
			// Before the first message omega knew nothing of alice.
			first, err := states.TurnMoment(ctx, ids[0])
			if err != nil {
				t.Fatal(err)
			}
			before, err := states.At(ctx, who, asof.Moment{At: first.At.Add(-time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if before.Known || len(before.Facts) > 0 || before.Conversation != nil {
				t.Errorf("before the first message: %+v", before)
			}
		})
	}
}
