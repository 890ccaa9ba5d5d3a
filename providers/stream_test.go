package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers/providertest"
)

// collect streams req through s and returns the reply and every delta.
func collect(t *testing.T, s Streamer, req Request) (Response, []Delta, error) {
	t.Helper()
	var deltas []Delta
	resp, err := s.Stream(t.Context(), req, func(d Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

func joinText(deltas []Delta) string {
	var b strings.Builder
	for _, d := range deltas {
		b.WriteString(d.Text)
	}
	return b.String()
}

func tools(deltas []Delta) []string {
	var out []string
	for _, d := range deltas {
		if d.Tool != "" {
			out = append(out, d.Tool+" "+d.ToolTarget)
		}
	}
	return out
}

func TestClaudeCodeStreamsToolUsesThenTheReply(t *testing.T) {
	plan := providertest.StreamPlan{Text: "All 12 tests pass.", Tools: []providertest.ToolUse{
		{Name: "Read", Input: map[string]any{"file_path": "/home/me/notes.md"}},
		{Name: "Bash", Input: map[string]any{"command": "go test ./... -run X", "description": "Run tests"}},
	}}
	c, _ := newTestClaude(t, providertest.FakeClaude(t, providertest.ClaudeStream(plan, "sess-tools")), nil)
	resp, deltas, err := collect(t, c, Request{Prompt: "run the tests"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := tools(deltas), []string{"Read /home/me/notes.md", "Bash go test ./..."}; !slices.Equal(got, want) {
		t.Errorf("tool deltas %q, want %q (each once, though the CLI repeats them in whole messages)", got, want)
	}
	if deltas[0].Tool == "" || joinText(deltas) != plan.Reply() {
		t.Errorf("deltas %+v: want the tool uses first and then the reply, once", deltas)
	}
	if resp.Text != plan.Reply() || resp.SessionID != "sess-tools" || resp.NumTurns != 3 || resp.OutputTokens != 4 {
		t.Errorf("reply %+v", resp)
	}
}

func TestClaudeCodeStreamWithoutPartialMessages(t *testing.T) {
	// What a CLI prints without --include-partial-messages: whole messages.
	// Sub-agent text is not the reply.
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s"}`,
		`{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"t1","name":"Grep","input":{"pattern":"TODO"}}]}}`,
		`{"type":"assistant","parent_tool_use_id":"t9","message":{"content":[{"type":"text","text":"sub-agent musings"}]}}`,
		`{"type":"user","message":{"content":"a plain string content"}}`,
		`{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"Found 3."}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"Found 3.","session_id":"s","num_turns":2}`,
	}
	script := "cat <<'EOF'\n" + strings.Join(lines, "\n") + "\nEOF\n"
	c, _ := newTestClaude(t, providertest.FakeClaude(t, script), nil)
	resp, deltas, err := collect(t, c, Request{Prompt: "x"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []Delta{{Text: "Let me look."}, {Tool: "Grep", ToolTarget: "TODO"}, {Text: "Found 3."}}
	if !slices.Equal(deltas, want) || resp.Text != "Found 3." {
		t.Errorf("deltas %+v reply %q, want %+v", deltas, resp.Text, want)
	}
}

func TestClaudeCodeStreamJoinsResumedParts(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	bin := fakeClaude(t, "claude-maxturns.sh", "FAKE_CLAUDE_STATE="+state, "FAKE_CLAUDE_LIMIT_HITS=1")
	c, _ := newTestClaude(t, bin, nil)
	resp, deltas, err := collect(t, c, Request{Prompt: "big task"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if joinText(deltas) != resp.Text || resp.Text != "part 1\n\ndone" {
		t.Errorf("deltas join to %q, reply %q", joinText(deltas), resp.Text)
	}
}

func TestClaudeCodeWithoutPartialMessagesFlag(t *testing.T) {
	// An older CLI refuses the flag; the call is made again without it,
	// and later calls leave it out from the start.
	calls := filepath.Join(t.TempDir(), "calls")
	script := fmt.Sprintf(`echo "$*" >> %q
for a in "$@"; do
	if [ "$a" = --include-partial-messages ]; then
		echo "error: unknown option '--include-partial-messages'" >&2
		exit 1
	fi
done
`, calls) + providertest.ClaudeResult("old but fine", "s-old")
	c, _ := newTestClaude(t, providertest.FakeClaude(t, script), nil)
	for range 2 {
		resp, deltas, err := collect(t, c, Request{Prompt: "x"})
		if err != nil || resp.Text != "old but fine" || len(deltas) != 1 {
			t.Fatalf("got %q, %+v, %v", resp.Text, deltas, err)
		}
	}
	if n := strings.Count(readFile(t, calls), "\n"); n != 3 {
		t.Errorf("%d runs, want 3: one refused, then one per call", n)
	}
}

func TestClaudeCodeStreamReportsErrorsAfterText(t *testing.T) {
	plan := providertest.StreamPlan{Text: "one two three", StopAfter: 2}
	script := strings.Replace(providertest.ClaudeStream(plan, "s"), "exec sleep 300\n",
		`echo '{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","session_id":"s"}'`+"\nexit 1\n", 1)
	c, _ := newTestClaude(t, providertest.FakeClaude(t, script), nil)
	_, deltas, err := collect(t, c, Request{Prompt: "x"})
	if ClassOf(err) != Server || joinText(deltas) != "one two" {
		t.Fatalf("got %v after %q", err, joinText(deltas))
	}
}

func TestToolTarget(t *testing.T) {
	long := "/srv/projects/" + strings.Repeat("deep/", 20) + "notes.md"
	tests := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"file_path": "notes.md"}, "notes.md"},
		{map[string]any{"file_path": long}, "…" + long[len(long)-59:]},
		{map[string]any{"command": "go test ./... -run TestX -count 1"}, "go test ./..."},
		{map[string]any{"command": "TOKEN=abc123 curl https://x"}, ""},
		{map[string]any{"command": "curl -H 'Authorization: Bearer sk-1' https://api"}, "curl -H"},
		{map[string]any{"command": "mysql --password=hunter2 db"}, "mysql"},
		{map[string]any{"url": "https://user:pw@example.com/a/b?key=secret#x"}, "https://example.com/a/b"},
		{map[string]any{"pattern": "func .*Stream"}, "func .*Stream"},
		{map[string]any{"query": "weather in Lisbon\nand more"}, "weather in Lisbon"},
		{map[string]any{"todos": []any{}}, ""},
	}
	for _, tt := range tests {
		raw, _ := json.Marshal(tt.input)
		if got := toolTarget(raw); got != tt.want {
			t.Errorf("toolTarget(%s) = %q, want %q", raw, got, tt.want)
		}
	}
	if got := toolTarget([]byte(`{"file_p`)); got != "" {
		t.Errorf("unfinished input gave %q", got)
	}
}

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
		wantClass Class
		wantText  string // reported before the failure
		wantInMsg string
	}{
		{"anthropic error event after text", NameAnthropic, sse(
			`data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}`,
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
		), Server, "Hel", "overloaded_error"},
		{"anthropic rate limit event", NameAnthropic, sse(
			`data: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
		), RateLimited, "", "slow down"},
		{"anthropic stream cut before message_stop", NameAnthropic, sse(
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
		), Server, "Hel", "message_stop"},
		{"openai stream cut before [DONE]", NameOpenAI, sse(
			`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
		), Server, "Hel", "[DONE]"},
		{"openai error chunk", NameOpenAI, sse(
			`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
			`data: {"error":{"message":"model crashed","type":"server_error"}}`,
		), Server, "Hel", "model crashed"},
		{"openai undecodable chunk", NameOpenAI, sse(`data: {not json`), Malformed, "", "undecodable"},
		{"openai empty reply", NameOpenAI, sse(`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`, `data: [DONE]`),
			Malformed, "", "no message content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newAPIDouble(t, tt.api, tt.reply)
			_, deltas, err := collect(t, d.provider.(Streamer), Request{Prompt: "hi"})
			var pe *Error
			if !errors.As(err, &pe) || pe.Class != tt.wantClass || !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Fatalf("got %v, want %v mentioning %q", err, tt.wantClass, tt.wantInMsg)
			}
			if joinText(deltas) != tt.wantText {
				t.Errorf("reported %q, want %q", joinText(deltas), tt.wantText)
			}
		})
	}
}

func TestOpenAIStreamFinishedWithoutDone(t *testing.T) {
	// Some local servers close after the last chunk without [DONE].
	d := newAPIDouble(t, NameOpenAI, sse(
		`data: {"model":"local","choices":[{"delta":{"content":"Hi"}}]}`,
		`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`,
	))
	resp, _, err := collect(t, d.provider.(Streamer), Request{Prompt: "hi"})
	if err != nil || resp.Text != "Hi" || resp.Model != "local" || resp.UsageReported {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestOpenAIStreamRequest(t *testing.T) {
	srv := providertest.StreamingOpenAI(t, providertest.StreamPlan{Text: "fine"})
	p := NewOpenAI(Config{OpenAIBaseURL: srv.URL, ModelFast: "m"})
	resp, _, err := collect(t, p, Request{Prompt: "hi"})
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
	p := NewOpenAI(Config{OpenAIBaseURL: srv.URL, ModelFast: "m"})
	resp, deltas, err := collect(t, p, Request{Prompt: "hi"})
	if err != nil || resp.Text != "older server" || joinText(deltas) != resp.Text || resp.UsageReported {
		t.Fatalf("got %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1]["stream_options"] != nil || reqs[1]["stream"] != true {
		t.Errorf("requests %v: want one more, streaming without stream_options", reqs)
	}
}

func TestAnthropicStreamRequestAndUsage(t *testing.T) {
	srv := providertest.StreamingAnthropic(t, providertest.StreamPlan{Text: "a b c", Model: "claude-x"})
	p := NewAnthropic(Config{AnthropicAPIKey: testKey, AnthropicBaseURL: srv.URL, ModelFast: "m", MaxTokens: 10})
	resp, deltas, err := collect(t, p, Request{Prompt: "hi"})
	if err != nil || len(deltas) != 3 || resp.Model != "claude-x" || resp.InputTokens != providertest.PromptTokens || resp.OutputTokens != 3 {
		t.Fatalf("got %+v, %+v, %v", resp, deltas, err)
	}
	if srv.Requests()[0]["stream"] != true {
		t.Errorf("request %v does not ask for a stream", srv.Requests()[0])
	}
}

// flaky streams: it fails with errs in order (after reporting the text in
// partial, if any), then succeeds.
type flaky struct {
	scripted
	partial string
}

func (f *flaky) Stream(_ context.Context, _ Request, onDelta func(Delta)) (Response, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		if f.partial != "" {
			onDelta(Delta{Text: f.partial})
		}
		return Response{}, f.errs[f.calls-1]
	}
	onDelta(Delta{Text: "ok"})
	return Response{Text: "ok"}, nil
}

func TestWithRetryStream(t *testing.T) {
	policy := RetryPolicy{Base: time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }}
	tests := []struct {
		name      string
		inner     Provider
		wantErr   bool
		wantCalls int
		wantText  string
	}{
		{"retried before the first delta", &flaky{scripted: scripted{errs: []error{classErr(Server)}}}, false, 2, "ok"},
		{"never after a delta", &flaky{scripted: scripted{errs: []error{classErr(Server)}}, partial: "Hel"}, true, 1, "Hel"},
		{"a provider that cannot stream is one delta", &scripted{errs: []error{classErr(Server)}}, false, 2, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, deltas, err := collect(t, WithRetry(tt.inner, policy, discardLogger()).(Streamer), Request{})
			calls := 0
			switch p := tt.inner.(type) {
			case *flaky:
				calls = p.calls
			case *scripted:
				calls = p.calls
			}
			if (err != nil) != tt.wantErr || calls != tt.wantCalls || joinText(deltas) != tt.wantText {
				t.Errorf("err %v, %d calls, reported %q; want error %v, %d calls, %q",
					err, calls, joinText(deltas), tt.wantErr, tt.wantCalls, tt.wantText)
			}
		})
	}
}

func TestStreamPlanDeltas(t *testing.T) {
	plan := providertest.StreamPlan{Words: 120}
	if n := len(plan.Deltas()); n != 120 {
		t.Errorf("%d deltas, want 120", n)
	}
	text := providertest.StreamPlan{Text: "Hi  there,\nworld"}
	if got := text.Deltas(); strings.Join(got, "") != "Hi  there,\nworld" || len(got) != 2 {
		t.Errorf("deltas %q", got)
	}
}

func TestClaudeStreamShell(t *testing.T) {
	plan := providertest.StreamPlan{Every: time.Millisecond}
	script := providertest.ClaudeStreamShell(plan) + `claude_stream_reply "echo: $(cat) \"quoted\" back\\slash *" sess-sh` + "\n"
	c, _ := newTestClaude(t, providertest.FakeClaude(t, script), nil)
	resp, deltas, err := collect(t, c, Request{Prompt: "hello   there"})
	want := `echo: hello there "quoted" back\slash *`
	if err != nil || resp.Text != want || joinText(deltas) != want || len(deltas) != 6 || resp.SessionID != "sess-sh" || resp.OutputTokens != 6 {
		t.Fatalf("got %+v, deltas %+v, %v", resp, deltas, err)
	}
}

func TestLineWriter(t *testing.T) {
	lines := make(chan []byte, 10)
	w := &lineWriter{lines: lines}
	for _, chunk := range []string{`{"a":`, "1}\n\n{\"b\"", ":2}\nlast"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	w.flush()
	close(lines)
	var got []string
	for l := range lines {
		got = append(got, string(l))
	}
	if want := []string{`{"a":1}`, "", `{"b":2}`, "last"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
}

func TestNewProviderStreams(t *testing.T) {
	// New wraps the provider with retries; the wrapper must stream, not
	// fall back to whole replies.
	srv := providertest.StreamingOpenAI(t, providertest.StreamPlan{Text: "one two three"})
	p, err := New(Config{Provider: NameOpenAI, OpenAIBaseURL: srv.URL, ModelFast: "m", MaxRetries: 1}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.(Streamer)
	if !ok {
		t.Fatalf("%T does not stream", p)
	}
	resp, deltas, err := collect(t, s, Request{Prompt: "hi"})
	if err != nil || len(deltas) != 3 || joinText(deltas) != resp.Text {
		t.Fatalf("got %+v, %+v, %v", resp, deltas, err)
	}
}
