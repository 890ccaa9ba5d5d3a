package claudecode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
	"github.com/omega-gateway/omega/providers/providertest/suite"
)

func tools(deltas []providers.Delta) []string {
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
	resp, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "run the tests"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, want := tools(deltas), []string{"Read /home/me/notes.md", "Bash go test ./..."}; !slices.Equal(got, want) {
		t.Errorf("tool deltas %q, want %q (each once, though the CLI repeats them in whole messages)", got, want)
	}
	if deltas[0].Tool == "" || suite.JoinText(deltas) != plan.Reply() {
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
	resp, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "x"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []providers.Delta{{Text: "Let me look."}, {Tool: "Grep", ToolTarget: "TODO"}, {Text: "Found 3."}}
	if !slices.Equal(deltas, want) || resp.Text != "Found 3." {
		t.Errorf("deltas %+v reply %q, want %+v", deltas, resp.Text, want)
	}
}

func TestClaudeCodeStreamJoinsResumedParts(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	bin := fakeClaude(t, "claude-maxturns.sh", "FAKE_CLAUDE_STATE="+state, "FAKE_CLAUDE_LIMIT_HITS=1")
	c, _ := newTestClaude(t, bin, nil)
	resp, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "big task"})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if suite.JoinText(deltas) != resp.Text || resp.Text != "part 1\n\ndone" {
		t.Errorf("deltas join to %q, reply %q", suite.JoinText(deltas), resp.Text)
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
		resp, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "x"})
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
	_, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "x"})
	if providers.ClassOf(err) != providers.Server || suite.JoinText(deltas) != "one two" {
		t.Fatalf("got %v after %q", err, suite.JoinText(deltas))
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

func TestClaudeStreamShell(t *testing.T) {
	plan := providertest.StreamPlan{Every: time.Millisecond}
	script := providertest.ClaudeStreamShell(plan) + `claude_stream_reply "echo: $(cat) \"quoted\" back\\slash *" sess-sh` + "\n"
	c, _ := newTestClaude(t, providertest.FakeClaude(t, script), nil)
	resp, deltas, err := suite.Collect(t, c, providers.Request{Prompt: "hello   there"})
	want := `echo: hello there "quoted" back\slash *`
	if err != nil || resp.Text != want || suite.JoinText(deltas) != want || len(deltas) != 6 || resp.SessionID != "sess-sh" || resp.OutputTokens != 6 {
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
