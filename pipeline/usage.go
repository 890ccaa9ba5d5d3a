package pipeline

import (
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/providers"
)

// callUsage records what a provider call took and cost, as the provider
// reported it.
func callUsage(resp providers.Response, elapsed time.Duration) *domain.CallUsage {
	return &domain.CallUsage{
		DurationMs: elapsed.Milliseconds(), InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		CacheReadTokens: resp.CacheReadTokens, CacheWriteTokens: resp.CacheWriteTokens, CostUSD: resp.CostUSD,
		UsageReported: resp.UsageReported, PromptBytes: resp.PromptBytes, ReplyBytes: resp.ReplyBytes,
	}
}
