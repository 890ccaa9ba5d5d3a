package providertest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// StreamPlan is how a streaming double writes its reply: like a real
// model, the first word after FirstToken and then one word every Every.
type StreamPlan struct {
	FirstToken time.Duration
	Every      time.Duration
	// Text is the reply, sent a word at a time (each word with the space
	// before it). When empty, Words generated words are sent.
	Text  string
	Words int
	Model string // default "stream-model"
	// StopAfter > 0 makes the double go silent after that many words and
	// stay so until the client leaves: a model that stops halfway.
	StopAfter int
	// Whole makes a server answer the whole reply as JSON even when asked
	// to stream, as servers that cannot stream do.
	Whole bool
	// RejectStreamOptions makes the OpenAI-compatible server refuse, with
	// a 400 naming it, a request that has stream_options.
	RejectStreamOptions bool
	// Tools are tool uses a fake claude reports before its reply text.
	Tools []ToolUse
}

// ToolUse is a tool use of a fake claude.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Usage the streaming doubles report: the prompt is always PromptTokens
// long, and the reply one token per word.
const PromptTokens = 12

var filler = strings.Fields("the model writes this reply one word at a time so that a person " +
	"sees it grow on the screen while the rest of it is still being written")

// Deltas are the pieces the double sends, in order; they join to Reply.
func (p StreamPlan) Deltas() []string {
	text := p.Text
	if text == "" {
		words := make([]string, max(p.Words, 1))
		for i := range words {
			words[i] = filler[i%len(filler)]
		}
		text = strings.Join(words, " ")
	}
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	return append(out, text[start:])
}

// Reply is the whole reply the double writes.
func (p StreamPlan) Reply() string { return strings.Join(p.Deltas(), "") }

func (p StreamPlan) model() string { return cmp.Or(p.Model, "stream-model") }

// wholeAfter is how long the reply takes when sent at once.
func (p StreamPlan) wholeAfter() time.Duration {
	return p.FirstToken + time.Duration(len(p.Deltas())-1)*p.Every
}

// StreamServer is a streaming double of an LLM API; URL is its base URL.
type StreamServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
}

// Requests are the decoded bodies of the requests so far.
func (s *StreamServer) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

func newStreamServer(t testing.TB, path string, answer func(w http.ResponseWriter, r *http.Request, req map[string]any)) *StreamServer {
	t.Helper()
	s := &StreamServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		var req map[string]any
		if err == nil {
			err = json.Unmarshal(raw, &req)
		}
		if err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		answer(w, r, req)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// StreamingOpenAI starts an OpenAI-compatible server that answers every
// chat completion with plan: as server-sent events when asked to stream
// (a usage chunk when stream_options.include_usage, then [DONE]), as one
// JSON body after the whole reply's time otherwise.
func StreamingOpenAI(t testing.TB, plan StreamPlan) *StreamServer {
	return newStreamServer(t, "/chat/completions", func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		opts, hasOpts := req["stream_options"].(map[string]any)
		if plan.RejectStreamOptions && hasOpts {
			writeJSON(w, http.StatusBadRequest, `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}`)
			return
		}
		if req["stream"] != true || plan.Whole {
			if pause(r.Context(), plan.wholeAfter()) {
				writeJSON(w, http.StatusOK, OpenAIReply(plan.model(), plan.Reply()))
			}
			return
		}
		ev := newEventWriter(w)
		chunk := func(delta map[string]any, finish any) string {
			return mustJSON(map[string]any{"id": "chatcmpl-stream", "object": "chat.completion.chunk", "model": plan.model(),
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		ev.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if !plan.words(r.Context(), func(word string) { ev.send("", chunk(map[string]any{"content": word}, nil)) }) {
			return
		}
		ev.send("", chunk(map[string]any{}, "stop"))
		if opts["include_usage"] == true {
			n := len(plan.Deltas())
			ev.send("", mustJSON(map[string]any{"id": "chatcmpl-stream", "object": "chat.completion.chunk", "model": plan.model(),
				"choices": []any{}, "usage": map[string]int{"prompt_tokens": PromptTokens, "completion_tokens": n, "total_tokens": PromptTokens + n}}))
		}
		ev.send("", "[DONE]")
	})
}

// StreamingAnthropic starts a Messages API server that answers every
// request with plan: as the API's server-sent events when asked to stream,
// as one JSON message after the whole reply's time otherwise.
func StreamingAnthropic(t testing.TB, plan StreamPlan) *StreamServer {
	return newStreamServer(t, "/v1/messages", func(w http.ResponseWriter, r *http.Request, req map[string]any) {
		if req["stream"] != true || plan.Whole {
			if pause(r.Context(), plan.wholeAfter()) {
				writeJSON(w, http.StatusOK, AnthropicReply(plan.model(), plan.Reply()))
			}
			return
		}
		ev := newEventWriter(w)
		ev.send("message_start", mustJSON(map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_stream", "type": "message", "role": "assistant", "model": plan.model(), "content": []any{},
			"usage": map[string]int{"input_tokens": PromptTokens, "output_tokens": 1}}}))
		ev.send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev.send("ping", `{"type":"ping"}`)
		if !plan.words(r.Context(), func(word string) {
			ev.send("content_block_delta", mustJSON(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]string{"type": "text_delta", "text": word}}))
		}) {
			return
		}
		ev.send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev.send("message_delta", mustJSON(map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": len(plan.Deltas())}}))
		ev.send("message_stop", `{"type":"message_stop"}`)
	})
}

// words sends the reply's words on plan's schedule; false when the client
// left or the plan stops halfway (it then waits for the client to leave).
func (p StreamPlan) words(ctx context.Context, send func(string)) bool {
	if !pause(ctx, p.FirstToken) {
		return false
	}
	for i, word := range p.Deltas() {
		if p.StopAfter > 0 && i == p.StopAfter {
			<-ctx.Done()
			return false
		}
		if i > 0 && !pause(ctx, p.Every) {
			return false
		}
		send(word)
	}
	return true
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// eventWriter writes server-sent events, each flushed at once.
type eventWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func newEventWriter(w http.ResponseWriter) eventWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	ev := eventWriter{w: w, f: f}
	ev.flush()
	return ev
}

func (e eventWriter) send(event, data string) {
	if event != "" {
		_, _ = fmt.Fprintf(e.w, "event: %s\n", event)
	}
	_, _ = fmt.Fprintf(e.w, "data: %s\n\n", data)
	e.flush()
}

func (e eventWriter) flush() {
	if e.f != nil {
		e.f.Flush()
	}
}
