package turn

import (
	"strings"

	"github.com/omega-gateway/omega/domain"
)

// Message coalescing (OMEGA_COALESCE_WINDOW): rapid messages of one sender
// become one turn. Every message keeps its own turn stream and
// MessageReceived; the first turn records MessagesMerged (the later turns'
// ids and texts, in arrival order) and answers them all in one provider
// call, and each later turn records TurnMergedInto and completes with
// StatusMerged.
type (
	MessagesMerged struct {
		Turns []string `json:"turns"`
		Texts []string `json:"texts"`
	}
	TurnMergedInto struct {
		Turn string `json:"turn"`
	}
)

func (MessagesMerged) EventType() string { return "MessagesMerged" }
func (TurnMergedInto) EventType() string { return "TurnMergedInto" }

// StatusMerged completes a turn whose message was answered by an earlier
// turn of the same sender (TurnMergedInto names it).
const StatusMerged = "merged"

// applyMerge folds the coalescing events: the merged texts follow the
// turn's own message, one per line, so every later step (context, prompt,
// history) sees the whole burst.
func (t *Turn) applyMerge(p domain.Payload) bool {
	switch e := p.(type) {
	case MessagesMerged:
		t.Merged = append(t.Merged, e.Turns...)
		if t.Received != nil && len(e.Texts) > 0 {
			t.Received.Text = strings.Join(append([]string{t.Received.Text}, e.Texts...), "\n")
		}
	case TurnMergedInto:
		t.MergedInto = e.Turn
	default:
		return false
	}
	return true
}
