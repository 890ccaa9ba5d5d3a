package providertest

import (
	"fmt"
	"strings"
	"time"
)

// ClaudeStream is the body of a fake claude script that writes plan as
// `claude -p --output-format stream-json --verbose
// --include-partial-messages` does, whatever its arguments: an init line,
// each of plan.Tools as a streamed tool use with its result, the reply's
// words as text deltas on plan's schedule, and the final result line
// (PromptTokens in, one token per word out) with session.
func ClaudeStream(plan StreamPlan, session string) string {
	var b strings.Builder
	line := func(v any) {
		fmt.Fprintf(&b, "printf '%%s\\n' %s\n", shellQuote(mustJSON(v)))
	}
	event := func(ev map[string]any) {
		line(map[string]any{"type": "stream_event", "event": ev, "session_id": session, "parent_tool_use_id": nil})
	}
	line(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": plan.model()})
	for i, tool := range plan.Tools {
		id := fmt.Sprintf("toolu_%d", i+1)
		input := mustJSON(tool.Input)
		event(map[string]any{"type": "message_start", "message": map[string]any{"model": plan.model(), "content": []any{}}})
		event(map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": tool.Name, "input": map[string]any{}}})
		half := len(input) / 2
		for _, part := range []string{input[:half], input[half:]} {
			event(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event(map[string]any{"type": "content_block_stop", "index": 0})
		line(map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
			"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": tool.Name, "input": tool.Input}}}})
		line(map[string]any{"type": "user", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
			"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "done"}}}})
	}
	event(map[string]any{"type": "message_start", "message": map[string]any{"model": plan.model(), "content": []any{}}})
	event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	fmt.Fprintf(&b, "sleep %s\n", seconds(plan.FirstToken))
	for i, word := range plan.Deltas() {
		if plan.StopAfter > 0 && i == plan.StopAfter {
			b.WriteString("exec sleep 300\n")
			return b.String()
		}
		if i > 0 && plan.Every > 0 {
			fmt.Fprintf(&b, "sleep %s\n", seconds(plan.Every))
		}
		event(map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": word}})
	}
	event(map[string]any{"type": "content_block_stop", "index": 0})
	line(map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": plan.Reply()}}}})
	event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}})
	event(map[string]any{"type": "message_stop"})
	line(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": plan.Reply(),
		"session_id": session, "num_turns": len(plan.Tools) + 1, "model": plan.model(),
		"usage":          map[string]int{"input_tokens": PromptTokens, "output_tokens": len(plan.Deltas())},
		"total_cost_usd": 0.001, "duration_ms": plan.wholeAfter().Milliseconds()})
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}

// ClaudeStreamShell defines the shell function claude_stream_reply TEXT
// SESSION for fake claude scripts that make their reply up as they run
// (from their stdin, say): it writes TEXT, word by word and on plan's
// schedule (FirstToken, Every, StopAfter), as stream-json text deltas and
// then a result line, the words joined by single spaces. Put it before the
// script's own commands, without a #! line of their own:
//
//	providertest.FakeClaude(t, providertest.ClaudeStreamShell(plan)+`claude_stream_reply "echo: $(cat)" sess-1`)
func ClaudeStreamShell(plan StreamPlan) string {
	stop := "0"
	if plan.StopAfter > 0 {
		stop = fmt.Sprint(plan.StopAfter)
	}
	return fmt.Sprintf(`claude_json_escape() {
	printf '%%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/	/\\t/g' | awk 'NR > 1 { printf "\\n" } { printf "%%s", $0 }'
}
claude_stream_event() {
	printf '{"type":"stream_event","event":%%s,"session_id":"%%s","parent_tool_use_id":null}\n' "$1" "$2"
}
claude_stream_reply() {
	printf '{"type":"system","subtype":"init","session_id":"%%s"}\n' "$2"
	claude_stream_event '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' "$2"
	sleep %s
	n=0
	joined=""
	set -f # the words are text, never file patterns
	for w in $1; do
		if [ %s -gt 0 ] && [ "$n" -eq %s ]; then exec sleep 300; fi
		if [ "$n" -gt 0 ]; then sleep %s; w=" $w"; fi
		n=$((n + 1))
		joined="$joined$w"
		claude_stream_event "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"$(claude_json_escape "$w")\"}}" "$2"
	done
	claude_stream_event '{"type":"content_block_stop","index":0}' "$2"
	claude_stream_event '{"type":"message_stop"}' "$2"
	printf '{"type":"result","subtype":"success","is_error":false,"result":"%%s","session_id":"%%s","num_turns":1,"usage":{"input_tokens":%d,"output_tokens":%%d}}\n' "$(claude_json_escape "$joined")" "$2" "$n"
}
`, seconds(plan.FirstToken), stop, stop, seconds(plan.Every), PromptTokens)
}
