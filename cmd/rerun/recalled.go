package rerun

import (
	"context"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/recall"
)

// recordedRecall answers a re-run's full-text recall with the passages
// the turn's context recorded: the scratch store holds the sender's
// earlier turns, but its index may not have caught up with them when the
// context is built.
type recordedRecall struct{ hits []recall.Hit }

func recalledOf(decoded []domain.Payload) recordedRecall {
	var r recordedRecall
	for _, p := range decoded {
		if c, ok := p.(turn.ContextBuilt); ok {
			for _, ps := range c.Recalled {
				r.hits = append(r.hits, recall.Hit{ConversationID: ps.Conversation, TurnID: ps.Turn, Kind: ps.Kind, At: ps.At, Text: ps.Text})
			}
			return r
		}
	}
	return r
}

func (r recordedRecall) Search(context.Context, recall.Query) ([]recall.Hit, error) {
	return r.hits, nil
}
