package registry

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

// TestHTTPProvidersSendOnlyTheirOwnKey checks the whole request of each
// HTTP provider (line, headers and body) for every other secret.
func TestHTTPProvidersSendOnlyTheirOwnKey(t *testing.T) {
	plantedSecrets := providertest.PlantSecrets(t)
	cases := []struct {
		provider, path, ownKey string
		reply                  string
	}{
		{providers.NameAnthropic, "/v1/messages", plantedSecrets["OMEGA_ANTHROPIC_API_KEY"], providertest.AnthropicReply("m", "ok")},
		{providers.NameOpenAI, "/chat/completions", plantedSecrets["OMEGA_OPENAI_API_KEY"], providertest.OpenAIReply("m", "ok")},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			var mu sync.Mutex
			var seen []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := httputil.DumpRequest(r, true)
				mu.Lock()
				seen = append(seen, b...)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.reply))
			}))
			defer srv.Close()
			cfg := providers.Config{Provider: tc.provider, ModelFast: "m", MaxTokens: 10,
				AnthropicAPIKey: plantedSecrets["OMEGA_ANTHROPIC_API_KEY"], AnthropicBaseURL: srv.URL,
				OpenAIAPIKey: plantedSecrets["OMEGA_OPENAI_API_KEY"], OpenAIBaseURL: srv.URL}
			p, err := New(cfg, discardLogger())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(t.Context(), providers.Request{System: "s", Prompt: "hi"}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			mu.Lock()
			req := string(seen)
			mu.Unlock()
			if !strings.Contains(req, tc.path) || !strings.Contains(req, tc.ownKey) {
				t.Fatalf("request does not carry its own key to %s:\n%s", tc.path, req)
			}
			for name, secret := range plantedSecrets {
				if secret != tc.ownKey && strings.Contains(req, secret) {
					t.Errorf("%s request carries %s", tc.provider, name)
				}
			}
		})
	}
}
