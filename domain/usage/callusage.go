package usage

// CallUsage is what one provider call took and cost, as the provider
// reported it (see ProviderReplied for the meaning of each field).
type CallUsage struct {
	DurationMs       int64   `json:"duration_ms"`
	InputTokens      int     `json:"input_tokens,omitempty"`
	OutputTokens     int     `json:"output_tokens,omitempty"`
	CacheReadTokens  int     `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int     `json:"cache_write_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	UsageReported    bool    `json:"usage_reported,omitempty"`
	PromptBytes      int     `json:"prompt_bytes"`
	ReplyBytes       int     `json:"reply_bytes"`
	// Model is the model that answered, where the provider said.
	Model string `json:"model,omitempty"`
}

// Tokens is what the call took in tokens, in and out.
func (u CallUsage) Tokens() int64 { return int64(u.InputTokens) + int64(u.OutputTokens) }
