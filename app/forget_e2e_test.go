package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/omega-gateway/omega/domain/turn"
)

// FORGET_CONVERSATION closes the conversation and clears the provider
// session: the next message starts a new conversation with full context.
func TestForgetStartsANewConversation(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := scriptedClaude(t, map[string]string{"forget this": `Forgotten. FORGET_CONVERSATION`})
			n := startNode(t, baseVars(t, b, claude))
			built := func(tn string) turn.ContextBuilt {
				for _, e := range turnEvents(t, n, tn) {
					if e.Type == "ContextBuilt" {
						var c turn.ContextBuilt
						if err := json.Unmarshal(e.Data, &c); err != nil {
							t.Fatal(err)
						}
						return c
					}
				}
				t.Fatalf("turn %s has no ContextBuilt", tn)
				return turn.ContextBuilt{}
			}
			first := say(t, n, "eve", "hello", "20s")
			second := say(t, n, "eve", "please forget this", "20s")
			if second.Reply != "Forgotten." {
				t.Fatalf("reply = %q", second.Reply)
			}
			if err := n.rt.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			third := say(t, n, "eve", "who am I?", "20s")
			c1, c2, c3 := built(first.TurnID), built(second.TurnID), built(third.TurnID)
			if c1.ConversationID != c2.ConversationID {
				t.Fatalf("the second message started a new conversation")
			}
			if c3.ConversationID == c2.ConversationID || c3.SessionID != "" || c3.Continuation || len(c3.History) != 0 {
				t.Fatalf("after forget: conversation %s (was %s), session %q, history %d", c3.ConversationID, c2.ConversationID, c3.SessionID, len(c3.History))
			}
		})
	}
}
