// Package providertest has doubles of the LLM providers for tests: fake
// Claude Code executables and local Anthropic and OpenAI-compatible servers.
// It does not import providers, so tests inside that package can use it.
package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FakeClaude writes script as an executable shell script into a temporary
// directory and returns its path, for Config.ClaudeBin. A missing #! line
// is added.
func FakeClaude(t testing.TB, script string) string {
	t.Helper()
	if !strings.HasPrefix(script, "#!") {
		script = "#!/bin/sh\n" + script
	}
	path := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatalf("write fake claude: %v", err)
	}
	return path
}

// ClaudeResult is the body of a fake claude script that prints a successful
// result with text and session, whatever its arguments.
func ClaudeResult(text, session string) string {
	out := map[string]any{
		"type": "result", "subtype": "success", "is_error": false,
		"result": text, "session_id": session, "num_turns": 1,
		"usage":          map[string]int{"input_tokens": 10, "output_tokens": 5},
		"total_cost_usd": 0.001, "duration_ms": 10,
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // a map of plain values always encodes
	}
	return fmt.Sprintf("cat <<'OMEGA_EOF'\n%s\nOMEGA_EOF\n", b)
}

// Message is a chat message as both APIs send it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is a decoded OpenAI chat completions request.
type ChatRequest struct {
	Model    string      `json:"model"`
	Messages []Message   `json:"messages"`
	Header   http.Header `json:"-"`
	Path     string      `json:"-"`
}

// MessagesRequest is a decoded Anthropic Messages API request.
type MessagesRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system"`
	Messages  []Message   `json:"messages"`
	Header    http.Header `json:"-"`
	Path      string      `json:"-"`
}

// Handler answers one decoded request with a status, a body and headers.
type Handler[R any] func(req R) (status int, body string, headers map[string]string)

// NewOpenAIServer starts an OpenAI-compatible server whose base URL (for
// Config.OpenAIBaseURL) is the returned server's URL. Each POST to
// /chat/completions is decoded and passed to handler.
func NewOpenAIServer(t testing.TB, handler Handler[ChatRequest]) *httptest.Server {
	t.Helper()
	return newServer(t, "/chat/completions", func(r *http.Request, body []byte) (int, string, map[string]string) {
		var req ChatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return http.StatusBadRequest, `{"error":{"message":"bad json"}}`, nil
		}
		req.Header, req.Path = r.Header, r.URL.Path
		return handler(req)
	})
}

// NewAnthropicServer starts an Anthropic Messages API server whose URL is
// the base URL for Config.AnthropicBaseURL. Each POST to /v1/messages is
// decoded and passed to handler.
func NewAnthropicServer(t testing.TB, handler Handler[MessagesRequest]) *httptest.Server {
	t.Helper()
	return newServer(t, "/v1/messages", func(r *http.Request, body []byte) (int, string, map[string]string) {
		var req MessagesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, nil
		}
		req.Header, req.Path = r.Header, r.URL.Path
		return handler(req)
	})
}

func newServer(t testing.TB, path string, answer func(*http.Request, []byte) (int, string, map[string]string)) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status, out, headers := answer(r, body)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// OpenAIReply is a successful chat completions body with text from model.
func OpenAIReply(model, text string) string {
	return mustJSON(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": text},
		}},
		"usage": map[string]int{"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
	})
}

// AnthropicReply is a successful Messages API body with text from model.
func AnthropicReply(model, text string) string {
	return mustJSON(map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": model,
		"content":     []any{map[string]string{"type": "text", "text": text}},
		"stop_reason": "end_turn",
		"usage":       map[string]int{"input_tokens": 12, "output_tokens": 7},
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of plain values
	}
	return string(b)
}
