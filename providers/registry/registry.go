// Package registry is the one place that knows every provider: it builds
// the one that Config names, wrapped with retries. The concrete providers
// import the port (providers), so the choice cannot live there.
package registry

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/claudecode"
	"github.com/omega-gateway/omega/providers/httpapi"
)

// New returns the configured provider wrapped with retries.
func New(cfg providers.Config, logger *slog.Logger) (providers.Provider, error) {
	if logger == nil {
		logger = slog.Default()
	}
	policy := providers.RetryPolicy{MaxRetries: cfg.MaxRetries, Base: cfg.RetryBase}
	if cfg.MaxRetries <= 0 {
		policy.MaxRetries = -1 // an explicit 0 turns retries off
	}
	var p providers.Provider
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case providers.NameClaudeCode:
		p = claudecode.New(cfg, logger)
		// A Claude Code call that timed out has already run for the full
		// (long) timeout; running it again would keep the user waiting for
		// hours, so only quick failures are retried.
		policy.SkipTimeouts = true
	case providers.NameAnthropic:
		p = httpapi.NewAnthropic(cfg)
	case providers.NameOpenAI:
		p = httpapi.NewOpenAI(cfg)
	default:
		return nil, fmt.Errorf("unknown provider %q: want %s, %s or %s",
			cfg.Provider, providers.NameClaudeCode, providers.NameAnthropic, providers.NameOpenAI)
	}
	return providers.WithRetry(p, policy, logger), nil
}
