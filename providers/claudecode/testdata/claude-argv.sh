#!/bin/sh
# Records its argv (NUL-separated), CLAUDECODE and working directory in
# $FAKE_CLAUDE_ARGV, its stdin (the prompt) in $FAKE_CLAUDE_ARGV.stdin and
# the command line every local user can read in $FAKE_CLAUDE_ARGV.cmdline,
# then succeeds reporting a model.
: "${FAKE_CLAUDE_ARGV:?FAKE_CLAUDE_ARGV must be set}"
{
	for a in "$@"; do printf '%s\0' "$a"; done
	printf 'CLAUDECODE=%s\0' "${CLAUDECODE-<unset>}"
	printf 'PWD=%s\0' "$(pwd)"
} > "$FAKE_CLAUDE_ARGV"
cat > "$FAKE_CLAUDE_ARGV.stdin"
cat "/proc/$$/cmdline" > "$FAKE_CLAUDE_ARGV.cmdline" 2>/dev/null || printf '%s\0' "$0" "$@" > "$FAKE_CLAUDE_ARGV.cmdline"
cat <<'JSON'
{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"sess-argv","num_turns":1,"model":"claude-test-model","usage":{"input_tokens":1,"output_tokens":1}}
JSON
