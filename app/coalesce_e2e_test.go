package app_test

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/turn"
)

// Three messages sent in quick succession become one turn with one
// provider call whose prompt holds all three, when OMEGA_COALESCE_WINDOW is
// set; every message is still recorded, and the two later turns complete
// as merged into the first. With the window off they are three turns.
func TestRapidMessagesCoalesceIntoOneTurn(t *testing.T) {
	texts := []string{"first: I need a gift", "second: for my sister", "third: she likes books"}
	for _, b := range backends() {
		for _, window := range []string{"3s", "0s"} {
			t.Run(b.name+"/window="+window, func(t *testing.T) {
				claude := newMemoryClaude(t)
				vars := baseVars(t, b, claude.bin)
				vars["OMEGA_COALESCE_WINDOW"] = window
				n := startNode(t, vars)
				say(t, n, "ana", "hello", "20s") // the welcome is behind us

				var ids []string
				for _, text := range texts {
					ids = append(ids, say(t, n, "ana", text, "0s").TurnID)
				}
				outs := make([]string, len(ids))
				for i, id := range ids {
					out := get(t, n.url+"/api/turns/"+id+"?wait=30s")
					outs[i] = out.Status
					if countType(turnEvents(t, n, id), "MessageReceived") != 1 {
						t.Fatalf("turn %d lost its MessageReceived", i)
					}
				}
				calls := claude.turnCalls(t)[1:] // after "hello"
				if window == "0s" {
					if len(calls) != 3 || strings.Join(outs, ",") != "ok,ok,ok" {
						t.Fatalf("without coalescing: %d calls, statuses %v", len(calls), outs)
					}
					return
				}
				if len(calls) != 1 {
					t.Fatalf("%d provider calls for a burst, want 1", len(calls))
				}
				for _, text := range texts {
					if !strings.Contains(calls[0].prompt, text) {
						t.Fatalf("the prompt lacks %q:\n%s", text, calls[0].prompt)
					}
				}
				if want := "ok," + turn.StatusMerged + "," + turn.StatusMerged; strings.Join(outs, ",") != want {
					t.Fatalf("statuses %v, want %s", outs, want)
				}
				merged := decodeLast[turn.MessagesMerged](t, turnEvents(t, n, ids[0]), "MessagesMerged")
				if strings.Join(merged.Turns, ",") != ids[1]+","+ids[2] {
					t.Fatalf("merged %v, want %v", merged.Turns, ids[1:])
				}
				// The conversation's history holds the burst as the model saw it.
				waitFor(t, "the burst in the turns read model", func() bool {
					return queryInt(t, n, `SELECT COUNT(*) FROM turns WHERE turn_id = $1 AND input = $2`, ids[0], strings.Join(texts, "\n")) == 1
				})
				for _, id := range ids[1:] {
					if into := decodeLast[turn.TurnMergedInto](t, turnEvents(t, n, id), "TurnMergedInto"); into.Turn != ids[0] {
						t.Fatalf("turn %s merged into %q", id, into.Turn)
					}
				}
			})
		}
	}
}
