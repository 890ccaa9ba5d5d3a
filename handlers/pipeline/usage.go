package pipeline

import (
	"context"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/providers"
)

// forCall tags ctx with what the turn's call is for, so the budget guard
// in front of the provider decides on the right limits: the sender's (a
// member's in a group), and a scheduled action as background work.
func forCall(ctx context.Context, st *turnState, purpose string) context.Context {
	c := providers.Call{Purpose: purpose}
	if m := st.Received; m != nil {
		c.Sender = sender.SenderKey(m.Channel, m.SenderID)
		c.Background = m.Task != nil
	}
	return providers.WithCall(ctx, c)
}
