package registry_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/claudecode"
	"github.com/omega-gateway/omega/providers/httpapi"
	"github.com/omega-gateway/omega/providers/providertest"
)

// BenchmarkStream measures, for each provider against its streaming double
// answering like a real model (first token after 800 ms, then 120 words at
// 25 ms), when the first text is reported and when the reply is whole.
func BenchmarkStream(b *testing.B) {
	plan := providertest.StreamPlan{FirstToken: 800 * time.Millisecond, Words: 120, Every: 25 * time.Millisecond}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := providers.Config{ModelFast: "m", MaxTokens: 1000, AnthropicAPIKey: "sk-test"}
	builds := []struct {
		name  string
		build func(b *testing.B) providers.Provider
	}{
		{providers.NameClaudeCode, func(b *testing.B) providers.Provider {
			c := cfg
			c.ClaudeBin = providertest.FakeClaude(b, providertest.ClaudeStream(plan, "s"))
			return claudecode.New(c, quiet)
		}},
		{providers.NameAnthropic, func(b *testing.B) providers.Provider {
			c := cfg
			c.AnthropicBaseURL = providertest.StreamingAnthropic(b, plan).URL
			return httpapi.NewAnthropic(c)
		}},
		{providers.NameOpenAI, func(b *testing.B) providers.Provider {
			c := cfg
			c.OpenAIBaseURL = providertest.StreamingOpenAI(b, plan).URL
			return httpapi.NewOpenAI(c)
		}},
	}
	for _, bb := range builds {
		b.Run(bb.name, func(b *testing.B) {
			s := bb.build(b).(providers.Streamer)
			var first, whole time.Duration
			for b.Loop() {
				start := time.Now()
				var got time.Duration
				resp, err := s.Stream(b.Context(), providers.Request{Prompt: "hi", WorkDir: b.TempDir()}, func(d providers.Delta) {
					if got == 0 && d.Text != "" {
						got = time.Since(start)
					}
				})
				if err != nil || resp.Text != plan.Reply() {
					b.Fatalf("Stream: %q, %v", resp.Text, err)
				}
				first += got
				whole += time.Since(start)
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first_text_ms")
			b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "reply_ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
