package app_test

import (
	"path/filepath"
	"slices"
	"testing"
)

// A resumed session that fails with a session error is given up at once:
// the very next call is a fresh session with the whole context (no
// retries of the broken session first), and the user gets the reply.
func TestFailedResumeFallsBackAtOnce(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			callLog := filepath.Join(dir, "calls.log")
			claude := writeClaude(t, dir, `echo "${resume:--}" >> "`+callLog+`"
if [ -n "$resume" ]; then
  echo "No conversation found with session ID: $resume" >&2
  exit 1
fi
printf '{"type":"result","subtype":"success","is_error":false,"result":"echo: %s","session_id":"sess-1","num_turns":1}\n' "$last"
`)
			n := startNode(t, baseVars(t, b, claude))
			if out := say(t, n, "ana", "first", "20s"); out.Reply != "echo: first" {
				t.Fatalf("first turn: %+v", out)
			}
			out := say(t, n, "ana", "second", "20s")
			if out.Reply != "echo: second" {
				t.Fatalf("second turn: %+v", out)
			}
			if got, want := calls(t, callLog), []string{"-", "sess-1", "-"}; !slices.Equal(got, want) {
				t.Fatalf("calls (resumed session or -) %q, want %q", got, want)
			}
			if n := countType(turnEvents(t, n, out.TurnID), "ProviderFailed"); n != 1 {
				t.Fatalf("%d ProviderFailed in the second turn, want 1", n)
			}
		})
	}
}
