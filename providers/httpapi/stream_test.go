package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func TestReadSSE(t *testing.T) {
	body := ": keep-alive\r\nevent: a\r\ndata: one\r\ndata: two\r\n\r\ndata: {\"x\":1}\n\nevent: ignored-without-data\n\ndata: last"
	var got []string
	err := readSSE(strings.NewReader(body), func(event, data string) error {
		got = append(got, event+"|"+data)
		return nil
	})
	want := []string{"a|one\ntwo", `|{"x":1}`, "|last"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// sse answers with a canned event stream, as one body.
func sse(events ...string) reply {
	return reply{status: http.StatusOK, body: strings.Join(events, "\n\n") + "\n\n",
		headers: map[string]string{"Content-Type": "text/event-stream"}}
}

func TestHTTPStreamProtocolFailures(t *testing.T) {
	tests := []struct {
		name      string
		api       string
		reply     reply
		wantClass providers.Class
		wantText  string // reported before the failure
		wantInMsg string
	}{
		{"anthropic error event after text", providers.NameAnthropic, sse(
			`data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}`,
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
		), providers.Server, "Hel", "overloaded_error"},
		{"anthropic rate limit event", providers.NameAnthropic, sse(
			`data: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
		), providers.RateLimited, "", "slow down"},
		{"anthropic stream cut before message_stop", providers.NameAnthropic, sse(
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
		), providers.Server, "Hel", "message_stop"},
		{"openai stream cut before [DONE]", providers.NameOpenAI, sse(
			`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
		), providers.Server, "Hel", "[DONE]"},
		{"openai error chunk", providers.NameOpenAI, sse(
			`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
			`data: {"error":{"message":"model crashed","type":"server_error"}}`,
		), providers.Server, "Hel", "model crashed"},
		{"openai undecodable chunk", providers.NameOpenAI, sse(`data: {not json`), providers.Malformed, "", "undecodable"},
		{"openai empty reply", providers.NameOpenAI, sse(`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`, `data: [DONE]`),
			providers.Malformed, "", "no message content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newAPIDouble(t, tt.api, tt.reply)
			_, deltas, err := suite.Collect(t, d.provider.(providers.Streamer), providers.Request{Prompt: "hi"})
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Class != tt.wantClass || !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Fatalf("got %v, want %v mentioning %q", err, tt.wantClass, tt.wantInMsg)
			}
			if suite.JoinText(deltas) != tt.wantText {
				t.Errorf("reported %q, want %q", suite.JoinText(deltas), tt.wantText)
			}
		})
	}
}

func TestOpenAIStreamFinishedWithoutDone(t *testing.T) {
	// Some local servers close after the last chunk without [DONE].
	d := newAPIDouble(t, providers.NameOpenAI, sse(
		`data: {"model":"local","choices":[{"delta":{"content":"Hi"}}]}`,
		`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`,
	))
	resp, _, err := suite.Collect(t, d.provider.(providers.Streamer), providers.Request{Prompt: "hi"})
	if err != nil || resp.Text != "Hi" || resp.Model != "local" || resp.UsageReported {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestOpenAIStreamRequest(t *testing.T) {
	srv := providertest.StreamingOpenAI(t, providertest.StreamPlan{Text: "fine"})
	p := NewOpenAI(providers.Config{OpenAIBaseURL: srv.URL, ModelFast: "m"})
	resp, _, err := suite.Collect(t, p, providers.Request{Prompt: "hi"})
	if err != nil || resp.InputTokens != providertest.PromptTokens || resp.OutputTokens != 1 {
		t.Fatalf("got %+v, %v", resp, err)
	}
	req := srv.Requests()[0]
	if req["stream"] != true || req["stream_options"].(map[string]any)["include_usage"] != true {
		t.Errorf("request %v does not ask for a stream with usage", req)
	}
}

func TestOpenAIStreamOptionsRefused(t *testing.T) {
	srv := providertest.StreamingOpenAI(t, providertest.StreamPlan{Text: "older server", RejectStreamOptions: true})
	p := NewOpenAI(providers.Config{OpenAIBaseURL: srv.URL, ModelFast: "m"})
	resp, deltas, err := suite.Collect(t, p, providers.Request{Prompt: "hi"})
	if err != nil || resp.Text != "older server" || suite.JoinText(deltas) != resp.Text || resp.UsageReported {
		t.Fatalf("got %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1]["stream_options"] != nil || reqs[1]["stream"] != true {
		t.Errorf("requests %v: want one more, streaming without stream_options", reqs)
	}
}

func TestAnthropicStreamRequestAndUsage(t *testing.T) {
	srv := providertest.StreamingAnthropic(t, providertest.StreamPlan{Text: "a b c", Model: "claude-x"})
	p := NewAnthropic(providers.Config{AnthropicAPIKey: testKey, AnthropicBaseURL: srv.URL, ModelFast: "m", MaxTokens: 10})
	resp, deltas, err := suite.Collect(t, p, providers.Request{Prompt: "hi"})
	if err != nil || len(deltas) != 3 || resp.Model != "claude-x" || resp.InputTokens != providertest.PromptTokens || resp.OutputTokens != 3 {
		t.Fatalf("got %+v, %+v, %v", resp, deltas, err)
	}
	if srv.Requests()[0]["stream"] != true {
		t.Errorf("request %v does not ask for a stream", srv.Requests()[0])
	}
}
