package providers_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func TestClaudeCodeConformance(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	claude := func(t *testing.T, script string) providers.Provider {
		return providers.NewClaudeCode(providers.Config{ClaudeBin: providertest.FakeClaude(t, script), ModelFast: "fast"}, quiet)
	}
	reported := func(msg string) string {
		return fmt.Sprintf("cat <<'JSON'\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":%q,\"session_id\":\"s\"}\nJSON\nexit 1\n", msg)
	}
	suite.Run(t, suite.Harness{
		Reply: func(t *testing.T, text string) providers.Provider {
			return claude(t, providertest.ClaudeResult(text, "sess-1"))
		},
		Fail: func(t *testing.T, class providers.Class) (providers.Provider, bool) {
			switch class {
			case providers.RateLimited:
				return claude(t, reported("API Error: 429 rate limit exceeded")), true
			case providers.Auth:
				return claude(t, reported("API Error: 401 invalid api key")), true
			case providers.Server:
				return claude(t, "echo 'could not connect' >&2\nexit 3\n"), true
			}
			return nil, false // the CLI builds the request itself
		},
		Hang: func(t *testing.T) providers.Provider { return claude(t, "exec sleep 300\n") },
		Stream: func(t *testing.T, plan providertest.StreamPlan) providers.Provider {
			if plan.Whole { // a CLI that prints only its result
				return claude(t, providertest.ClaudeResult(plan.Reply(), "sess-1"))
			}
			return claude(t, providertest.ClaudeStream(plan, "sess-1"))
		},
		Resume: func(t *testing.T) (providers.Provider, func() []string) {
			argv := filepath.Join(t.TempDir(), "argv")
			p := claude(t, fmt.Sprintf("printf '%%s\\n' \"$@\" > %q\n", argv)+providertest.ClaudeResult("resumed", "sess-next"))
			return p, func() []string {
				raw, err := os.ReadFile(argv)
				if err != nil {
					t.Fatal(err)
				}
				args := strings.Split(string(raw), "\n")
				var ids []string
				for i, a := range args[:len(args)-1] {
					if a == "--resume" {
						ids = append(ids, args[i+1])
					}
				}
				return ids
			}
		},
	})
}

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
				return providers.NewAnthropic(cfg)
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
				return providers.NewOpenAI(cfg)
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
