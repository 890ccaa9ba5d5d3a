package providers

import (
	"time"

	"github.com/omega-gateway/omega/domain/usage"
)

// CallUsage is what the call that returned r took (elapsed) and cost, as
// the provider reported it, in the shape events record.
func (r Response) CallUsage(elapsed time.Duration) *usage.CallUsage {
	return &usage.CallUsage{
		DurationMs: elapsed.Milliseconds(), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, CostUSD: r.CostUSD,
		UsageReported: r.UsageReported, PromptBytes: r.PromptBytes, ReplyBytes: r.ReplyBytes, Model: r.Model,
	}
}

// CallUsageOf is CallUsage for a call that returned err: nil for a call
// a spending limit refused (class OverBudget), which was never made.
func (r Response) CallUsageOf(elapsed time.Duration, err error) *usage.CallUsage {
	if ClassOf(err) == OverBudget {
		return nil
	}
	return r.CallUsage(elapsed)
}
