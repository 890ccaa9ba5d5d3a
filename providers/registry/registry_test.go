package registry

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/claudecode"
	"github.com/omega-gateway/omega/providers/httpapi"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func TestNew(t *testing.T) {
	tests := []struct {
		provider, wantName string
		wantErr            bool
	}{
		{"claude-code", providers.NameClaudeCode, false},
		{"anthropic", providers.NameAnthropic, false},
		{" OpenAI ", providers.NameOpenAI, false},
		{"gemini", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			p, err := New(providers.Config{Provider: tt.provider}, discardLogger())
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New(%q) accepted an unknown provider", tt.provider)
				}
				return
			}
			if err != nil || p.Name() != tt.wantName {
				t.Fatalf("New(%q) = %v, %v", tt.provider, p, err)
			}
			switch p.(type) {
			case *claudecode.Provider, *httpapi.Anthropic, *httpapi.OpenAI:
				t.Errorf("New(%q) is not wrapped with retries", tt.provider)
			}
		})
	}
}

// New's retries are on: a server failure is tried again.
func TestNewRetries(t *testing.T) {
	var calls atomic.Int32
	srv := providertest.NewOpenAIServer(t, func(providertest.ChatRequest) (int, string, map[string]string) {
		if calls.Add(1) == 1 {
			return http.StatusInternalServerError, `{"error":{"message":"try again"}}`, nil
		}
		return http.StatusOK, providertest.OpenAIReply("m", "second time"), nil
	})
	p, err := New(providers.Config{Provider: providers.NameOpenAI, OpenAIBaseURL: srv.URL, ModelFast: "m",
		MaxRetries: 1, RetryBase: time.Millisecond}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(t.Context(), providers.Request{Prompt: "hi"})
	if err != nil || resp.Text != "second time" || calls.Load() != 2 {
		t.Fatalf("got %q, %v after %d calls; want the second answer", resp.Text, err, calls.Load())
	}
}

func TestNewProviderStreams(t *testing.T) {
	// New wraps the provider with retries; the wrapper must stream, not
	// fall back to whole replies.
	srv := providertest.StreamingOpenAI(t, providertest.StreamPlan{Text: "one two three"})
	p, err := New(providers.Config{Provider: providers.NameOpenAI, OpenAIBaseURL: srv.URL, ModelFast: "m", MaxRetries: 1}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.(providers.Streamer)
	if !ok {
		t.Fatalf("%T does not stream", p)
	}
	resp, deltas, err := suite.Collect(t, s, providers.Request{Prompt: "hi"})
	if err != nil || len(deltas) != 3 || suite.JoinText(deltas) != resp.Text {
		t.Fatalf("got %+v, %+v, %v", resp, deltas, err)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
