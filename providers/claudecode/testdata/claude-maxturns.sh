#!/bin/sh
# Hits the turn limit $FAKE_CLAUDE_LIMIT_HITS times (default 2), then
# succeeds. Each call appends its argv and then its stdin (the prompt, one
# line) NUL-separated, one call per line, to $FAKE_CLAUDE_STATE, whose line
# count is the call number.
: "${FAKE_CLAUDE_STATE:?FAKE_CLAUDE_STATE must be set}"
hits="${FAKE_CLAUDE_LIMIT_HITS:-2}"
{ for a in "$@"; do printf '%s\0' "$a"; done; printf 'STDIN=%s\0\n' "$(tr '\n' ' ')"; } >> "$FAKE_CLAUDE_STATE"
call=$(wc -l < "$FAKE_CLAUDE_STATE" | tr -d ' ')
if [ "$call" -le "$hits" ]; then
	printf '{"type":"result","subtype":"error_max_turns","is_error":true,"result":"part %s","session_id":"sess-long","num_turns":3,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$call"
	exit 1
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"sess-long","num_turns":1,"usage":{"input_tokens":10,"output_tokens":5}}\n'
