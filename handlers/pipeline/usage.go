package pipeline

import (
	"time"

	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/providers"
)

// callUsage records what a provider call took and cost, as the provider
// reported it.
func callUsage(resp providers.Response, elapsed time.Duration) *usage.CallUsage {
	return resp.CallUsage(elapsed)
}
