package turn

import (
	"encoding/json"
	"testing"

	"github.com/omega-gateway/omega/domain/usage"
)

// Replies recorded before usage was accounted still decode; tokens they
// carry count as reported, and no tokens at all stay unknown.
func TestProviderRepliedUsage(t *testing.T) {
	tests := []struct {
		name, data string
		want       usage.CallUsage
	}{
		{"before cache and cost fields", `{"provider":"p","model":"m","text":"hi","duration_ms":5,"input_tokens":3,"output_tokens":4,"prompt_bytes":10,"reply_bytes":2}`,
			usage.CallUsage{DurationMs: 5, InputTokens: 3, OutputTokens: 4, UsageReported: true, PromptBytes: 10, ReplyBytes: 2, Model: "m"}},
		{"nothing reported", `{"provider":"p","model":"m","text":"hi","duration_ms":5,"prompt_bytes":10,"reply_bytes":2}`,
			usage.CallUsage{DurationMs: 5, PromptBytes: 10, ReplyBytes: 2, Model: "m"}},
		{"everything", `{"duration_ms":5,"input_tokens":30,"output_tokens":4,"cache_read_tokens":20,"cache_write_tokens":5,"cost_usd":0.25,"usage_reported":true,"prompt_bytes":10,"reply_bytes":2}`,
			usage.CallUsage{DurationMs: 5, InputTokens: 30, OutputTokens: 4, CacheReadTokens: 20, CacheWriteTokens: 5, CostUSD: 0.25, UsageReported: true, PromptBytes: 10, ReplyBytes: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ProviderReplied
			if err := json.Unmarshal([]byte(tt.data), &r); err != nil {
				t.Fatal(err)
			}
			if got := r.Usage(); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
