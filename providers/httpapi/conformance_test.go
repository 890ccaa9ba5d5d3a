package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/httpapi"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func TestHTTPProvidersConformance(t *testing.T) {
	type api struct {
		name  string
		serve func(t testing.TB, status int, body string) *httptest.Server
		build func(cfg providers.Config, url string) providers.Provider
		reply func(text string) string
		fake  func(t testing.TB, plan providertest.StreamPlan) *providertest.StreamServer
	}
	apis := []api{
		{
			name: providers.NameAnthropic,
			serve: func(t testing.TB, status int, body string) *httptest.Server {
				return providertest.NewAnthropicServer(t, func(providertest.MessagesRequest) (int, string, map[string]string) { return status, body, nil })
			},
			build: func(cfg providers.Config, url string) providers.Provider {
				cfg.AnthropicAPIKey, cfg.AnthropicBaseURL = "sk-test", url
				return httpapi.NewAnthropic(cfg)
			},
			reply: func(text string) string { return providertest.AnthropicReply("m", text) },
			fake:  providertest.StreamingAnthropic,
		},
		{
			name: providers.NameOpenAI,
			serve: func(t testing.TB, status int, body string) *httptest.Server {
				return providertest.NewOpenAIServer(t, func(providertest.ChatRequest) (int, string, map[string]string) { return status, body, nil })
			},
			build: func(cfg providers.Config, url string) providers.Provider {
				cfg.OpenAIAPIKey, cfg.OpenAIBaseURL = "sk-test", url
				return httpapi.NewOpenAI(cfg)
			},
			reply: func(text string) string { return providertest.OpenAIReply("m", text) },
			fake:  providertest.StreamingOpenAI,
		},
	}
	statuses := map[providers.Class]int{
		providers.RateLimited: http.StatusTooManyRequests,
		providers.Auth:        http.StatusUnauthorized,
		providers.Server:      http.StatusInternalServerError,
		providers.BadRequest:  http.StatusBadRequest,
	}
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			cfg := providers.Config{ModelFast: "m", MaxTokens: 100}
			suite.Run(t, suite.Harness{
				Reply: func(t *testing.T, text string) providers.Provider {
					return a.build(cfg, a.serve(t, http.StatusOK, a.reply(text)).URL)
				},
				Fail: func(t *testing.T, class providers.Class) (providers.Provider, bool) {
					status, ok := statuses[class]
					if !ok {
						return nil, false
					}
					return a.build(cfg, a.serve(t, status, `{"error":{"type":"error","message":"refused"}}`).URL), true
				},
				Hang: func(t *testing.T) providers.Provider {
					stop := make(chan struct{})
					srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
						_, _ = io.Copy(io.Discard, r.Body)
						select {
						case <-r.Context().Done():
						case <-stop:
						}
					}))
					t.Cleanup(srv.Close)
					t.Cleanup(func() { close(stop) }) // runs first: Close waits for handlers
					return a.build(cfg, srv.URL)
				},
				Stream: func(t *testing.T, plan providertest.StreamPlan) providers.Provider {
					return a.build(cfg, a.fake(t, plan).URL)
				},
			})
		})
	}
}
