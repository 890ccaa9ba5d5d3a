package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

const testKey = "sk-test-SECRET-0123456789"

// reply is one canned HTTP answer.
type reply struct {
	status  int
	body    string
	headers map[string]string
	delay   time.Duration
}

// apiDouble starts a fake of the named API that answers with replies in
// order (repeating the last), and returns a provider pointed at it.
type apiDouble struct {
	provider providers.Provider
	calls    *atomic.Int32
}

func newAPIDouble(t *testing.T, name string, replies ...reply) apiDouble {
	t.Helper()
	var calls atomic.Int32
	next := func() reply {
		n := int(calls.Add(1))
		r := replies[min(n, len(replies))-1]
		time.Sleep(r.delay)
		return r
	}
	cfg := providers.Config{ModelFast: "test-model", MaxTokens: 100}
	var p providers.Provider
	switch name {
	case providers.NameAnthropic:
		srv := providertest.NewAnthropicServer(t, func(req providertest.MessagesRequest) (int, string, map[string]string) {
			r := next()
			return r.status, r.body, r.headers
		})
		cfg.AnthropicAPIKey, cfg.AnthropicBaseURL = testKey, srv.URL
		p = NewAnthropic(cfg)
	case providers.NameOpenAI:
		srv := providertest.NewOpenAIServer(t, func(req providertest.ChatRequest) (int, string, map[string]string) {
			r := next()
			return r.status, r.body, r.headers
		})
		cfg.OpenAIAPIKey, cfg.OpenAIBaseURL = testKey, srv.URL
		p = NewOpenAI(cfg)
	default:
		t.Fatalf("no double for %q", name)
	}
	return apiDouble{provider: p, calls: &calls}
}

func okBody(name, text string) string {
	if name == providers.NameAnthropic {
		return providertest.AnthropicReply("served-model", text)
	}
	return providertest.OpenAIReply("served-model", text)
}

// recordingRetry wraps p with retries whose waits are recorded, with no
// jitter so the waits are exact.
func recordingRetry(p providers.Provider) (providers.Provider, *[]time.Duration) {
	var waits []time.Duration
	policy := providers.RetryPolicy{
		Base: 10 * time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			return ctx.Err()
		},
		Jitter: func(time.Duration) time.Duration { return 0 },
	}
	return providers.WithRetry(p, policy, discardLogger()), &waits
}

func TestHTTPProviders(t *testing.T) {
	tests := []struct {
		name      string
		replies   func(api string) []reply
		timeout   time.Duration
		wantText  string
		wantClass providers.Class
		wantCalls int32
		wantWaits []time.Duration
	}{
		{
			name:      "success",
			replies:   func(api string) []reply { return []reply{{status: 200, body: okBody(api, "hi there")}} },
			wantText:  "hi there",
			wantCalls: 1,
		},
		{
			name: "429 with Retry-After then success",
			replies: func(api string) []reply {
				return []reply{
					{status: 429, body: `{"error":{"type":"rate_limit_error","message":"slow down"}}`, headers: map[string]string{"Retry-After": "7"}},
					{status: 200, body: okBody(api, "after wait")},
				}
			},
			wantText:  "after wait",
			wantCalls: 2,
			wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "429 with retry-after-ms then success",
			replies: func(api string) []reply {
				return []reply{
					{status: 429, body: `{}`, headers: map[string]string{"retry-after-ms": "1500"}},
					{status: 200, body: okBody(api, "after ms wait")},
				}
			},
			wantText:  "after ms wait",
			wantCalls: 2,
			wantWaits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name: "500 and 529 then success",
			replies: func(api string) []reply {
				return []reply{{status: 500, body: `oops`}, {status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
					{status: 200, body: okBody(api, "recovered")}}
			},
			wantText:  "recovered",
			wantCalls: 3,
			wantWaits: []time.Duration{0, 0},
		},
		{
			name: "401 is not retried and the key is not echoed",
			replies: func(string) []reply {
				return []reply{{status: 401, body: `{"error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`}}
			},
			wantClass: providers.Auth,
			wantCalls: 1,
		},
		{
			name:      "400 is a bad request",
			replies:   func(string) []reply { return []reply{{status: 400, body: `{"error":"model not found"}`}} },
			wantClass: providers.BadRequest,
			wantCalls: 1,
		},
		{
			name:      "malformed JSON",
			replies:   func(string) []reply { return []reply{{status: 200, body: `{"choices": [`}} },
			wantClass: providers.Malformed,
			wantCalls: 1,
		},
		{
			name: "slow response beyond the timeout",
			replies: func(api string) []reply {
				return []reply{{status: 200, body: okBody(api, "too late"), delay: 200 * time.Millisecond}}
			},
			timeout:   50 * time.Millisecond,
			wantClass: providers.Timeout,
			wantCalls: 4, // a timeout is retried, up to 3 times
			wantWaits: []time.Duration{0, 0, 0},
		},
	}
	for _, api := range []string{providers.NameAnthropic, providers.NameOpenAI} {
		for _, tt := range tests {
			t.Run(api+"/"+tt.name, func(t *testing.T) {
				d := newAPIDouble(t, api, tt.replies(api)...)
				p, waits := recordingRetry(d.provider)
				resp, err := p.Complete(t.Context(), providers.Request{System: "sys", Prompt: "hello", Timeout: tt.timeout})
				if tt.wantClass == providers.Unknown {
					if err != nil {
						t.Fatalf("Complete: %v", err)
					}
					if resp.Text != tt.wantText || resp.Model != "served-model" || resp.InputTokens != 12 || resp.OutputTokens != 7 || !resp.UsageReported || resp.CostUSD != 0 {
						t.Errorf("got %+v", resp)
					}
				} else {
					if providers.ClassOf(err) != tt.wantClass {
						t.Fatalf("got %v (class %v), want class %v", err, providers.ClassOf(err), tt.wantClass)
					}
					if strings.Contains(err.Error(), testKey) {
						t.Errorf("error leaks the API key: %q", err)
					}
				}
				if got := d.calls.Load(); got != tt.wantCalls {
					t.Errorf("%d calls, want %d", got, tt.wantCalls)
				}
				if !slices.Equal(*waits, tt.wantWaits) {
					t.Errorf("waits %v, want %v", *waits, tt.wantWaits)
				}
			})
		}
	}
}

// A server that reports no usage leaves it unknown rather than zero:
// nothing estimated is shown as measured.
func TestHTTPNoUsageIsUnreported(t *testing.T) {
	bodies := map[string]string{
		providers.NameAnthropic: `{"model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`,
		providers.NameOpenAI:    `{"model":"m","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`,
	}
	for api, body := range bodies {
		t.Run(api, func(t *testing.T) {
			d := newAPIDouble(t, api, reply{status: 200, body: body})
			resp, err := d.provider.Complete(t.Context(), providers.Request{Prompt: "hello"})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.UsageReported || resp.InputTokens != 0 || resp.ReplyBytes != 2 || resp.PromptBytes != 5 {
				t.Errorf("got %+v", resp)
			}
		})
	}
}

func TestAnthropicRequestShape(t *testing.T) {
	var got providertest.MessagesRequest
	srv := providertest.NewAnthropicServer(t, func(req providertest.MessagesRequest) (int, string, map[string]string) {
		got = req
		return 200, providertest.AnthropicReply("m", "ok"), nil
	})
	p := NewAnthropic(providers.Config{AnthropicAPIKey: testKey, AnthropicBaseURL: srv.URL + "/", ModelFast: "fast", MaxTokens: 321})
	req := providers.Request{System: "be nice", Prompt: "now",
		History: []providers.Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}, {Role: "user", Content: " "}}}
	if _, err := p.Complete(t.Context(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got.Path != "/v1/messages" || got.Header.Get("x-api-key") != testKey || got.Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("path %q headers %v", got.Path, got.Header)
	}
	want := []providertest.Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}, {Role: "user", Content: "now"}}
	if got.Model != "fast" || got.MaxTokens != 321 || got.System != "be nice" || !equalMessages(got.Messages, want) {
		t.Errorf("got %+v", got)
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	tests := []struct {
		name, key, wantAuth string
	}{
		{"with key", testKey, "Bearer " + testKey},
		{"local server without key", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got providertest.ChatRequest
			srv := providertest.NewOpenAIServer(t, func(req providertest.ChatRequest) (int, string, map[string]string) {
				got = req
				return 200, providertest.OpenAIReply("llama", "ok"), nil
			})
			p := NewOpenAI(providers.Config{OpenAIAPIKey: tt.key, OpenAIBaseURL: srv.URL, ModelFast: "fast"})
			if err := p.Check(t.Context()); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if _, err := p.Complete(t.Context(), providers.Request{System: "sys", Prompt: "now", Model: "llama",
				History: []providers.Message{{Role: "assistant", Content: "a"}}}); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			want := []providertest.Message{{Role: "system", Content: "sys"}, {Role: "assistant", Content: "a"}, {Role: "user", Content: "now"}}
			if got.Path != "/chat/completions" || got.Header.Get("Authorization") != tt.wantAuth ||
				got.Model != "llama" || !equalMessages(got.Messages, want) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func equalMessages(a, b []providertest.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHTTPCheck(t *testing.T) {
	tests := []struct {
		name    string
		p       providers.Provider
		wantErr string // empty: no error
	}{
		{"anthropic without key", NewAnthropic(providers.Config{AnthropicBaseURL: "https://api.anthropic.com"}), "OMEGA_ANTHROPIC_API_KEY"},
		{"anthropic bad URL", NewAnthropic(providers.Config{AnthropicAPIKey: testKey, AnthropicBaseURL: "api.anthropic.com"}), "OMEGA_ANTHROPIC_BASE_URL"},
		{"anthropic ok", NewAnthropic(providers.Config{AnthropicAPIKey: testKey}), ""},
		{"openai cloud without key", NewOpenAI(providers.Config{}), "OMEGA_OPENAI_API_KEY"},
		{"openai local without key", NewOpenAI(providers.Config{OpenAIBaseURL: "http://localhost:11434/v1"}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Check(t.Context())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if providers.ClassOf(err) != providers.Unavailable || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want Unavailable mentioning %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("Check leaks the key: %q", err)
			}
			// Complete refuses early instead of sending a doomed request.
			if _, cerr := tt.p.Complete(t.Context(), providers.Request{Prompt: "x"}); providers.ClassOf(cerr) != providers.Unavailable {
				t.Errorf("Complete: got %v, want Unavailable", cerr)
			}
		})
	}
}

func TestHTTPTransportErrorIsRetryable(t *testing.T) {
	// A closed port: connection refused.
	p := NewOpenAI(providers.Config{OpenAIBaseURL: "http://127.0.0.1:1/v1", OpenAIAPIKey: testKey})
	_, err := p.Complete(t.Context(), providers.Request{Prompt: "x"})
	if providers.ClassOf(err) != providers.Server || strings.Contains(err.Error(), testKey) {
		t.Fatalf("got %v, want a Server error without the key", err)
	}
}

func TestHTTPCallerCancel(t *testing.T) {
	d := newAPIDouble(t, providers.NameOpenAI, reply{status: 200, body: okBody(providers.NameOpenAI, "late"), delay: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := d.provider.Complete(ctx, providers.Request{Prompt: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 2, 22, 14, 30, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"retry-after-ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassOfStatus(t *testing.T) {
	tests := map[int]providers.Class{429: providers.RateLimited, 401: providers.Auth, 403: providers.Auth, 408: providers.Timeout, 500: providers.Server, 502: providers.Server,
		503: providers.Server, 529: providers.Server, 400: providers.BadRequest, 404: providers.BadRequest, 422: providers.BadRequest, 409: providers.Unknown}
	for status, want := range tests {
		if got := classOfStatus(status); got != want {
			t.Errorf("classOfStatus(%d) = %v, want %v", status, got, want)
		}
	}
}
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
