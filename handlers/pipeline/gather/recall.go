package gather

import (
	"context"

	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/recall"
)

// Recaller searches the full-text index of conversations (recall.Index).
type Recaller interface {
	Search(ctx context.Context, q recall.Query) ([]recall.Hit, error)
}

// Full-text recall: how many passages a recall adds, from how many hits.
const (
	recalledPassages = 5
	recallHits       = 20
)

// recalled are the passages of the chat's older conversations that best
// match a message asking to recall. A failed search is logged and the
// turn goes on without them: recall helps a reply, it never stops one.
func (g *Gatherer) recalled(ctx context.Context, chat, conversation, message string) []turn.RecalledPassage {
	if g.Recall == nil || !promptctx.Gate(message).Recall {
		return nil
	}
	hits, err := g.Recall.Search(ctx, recall.Query{Text: message, Chat: chat, Except: conversation, Limit: recallHits})
	if err != nil {
		g.Logger.Warn("recall: search failed; the context goes without recalled passages", "chat", chat, "err", err)
		return nil
	}
	out := make([]turn.RecalledPassage, 0, min(len(hits), recalledPassages))
	for _, h := range hits[:min(len(hits), recalledPassages)] {
		out = append(out, turn.RecalledPassage{Conversation: h.ConversationID, Turn: h.TurnID, Kind: h.Kind, At: h.At, Text: h.Text})
	}
	return out
}
