package pipeline

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/providers"
)

// callUsage records what a provider call took and cost, as the provider
// reported it.
func callUsage(resp providers.Response, elapsed time.Duration) *usage.CallUsage {
	return resp.CallUsage(elapsed)
}

// callUsageOr is the usage of a call that returned err: none for a call
// a spending limit refused, which was never made.
func callUsageOr(resp providers.Response, elapsed time.Duration, err error) *usage.CallUsage {
	if providers.ClassOf(err) == providers.OverBudget {
		return nil
	}
	return callUsage(resp, elapsed)
}

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
