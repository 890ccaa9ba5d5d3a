package providertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BuildClaude writes a fake Claude Code that plays the agents of the
// default build topology (--agent build-analyst, ...): each writes the
// files its phase must produce in the prompt's "Build folder:", and
// replies as its phase type expects. It refuses to run when its agent
// file is missing from .claude/agents (the guard's job). ctl is its
// control folder:
//
//   - a call without --agent is a chat turn: it proposes a build with
//     BUILD_PROPOSAL and logs "chat";
//   - calls.log gets "start AGENT ROLE" and "end AGENT ROLE" per call;
//   - QA fails the first time for each build folder (one corrective loop);
//   - a file reviewer-fails makes the reviewer fail always (escalation);
//   - a file slow-AGENT makes that agent's next call sleep 30 s first
//     (and is removed), for a kill -9 while it works;
//   - a file pause-AGENT makes each of its calls sleep 2 s (delay nudges).
func BuildClaude(t testing.TB, ctl string) string {
	t.Helper()
	script := strings.ReplaceAll(buildClaudeScript, "@CTL@", ctl)
	path := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatalf("write fake claude: %v", err)
	}
	return path
}

const buildClaudeScript = `#!/bin/sh
ctl='@CTL@'
prompt=$(cat)
agent=""; prev=""
for a in "$@"; do [ "$prev" = "--agent" ] && agent="$a"; prev="$a"; done
dir=$(printf '%s\n' "$prompt" | sed -n 's/^Build folder: //p' | head -n 1)
role=$(printf '%s\n' "$prompt" | sed -n 's/.*, role: //p' | head -n 1)
if [ -z "$agent" ]; then
  echo chat >> "$ctl/calls.log"
  printf '{"type":"result","subtype":"success","is_error":false,"result":"I can build that.\\nBUILD_PROPOSAL: a greeter that says hi","session_id":"s-chat","num_turns":1}\n'
  exit 0
fi
if [ ! -f ".claude/agents/$agent.md" ]; then echo "no agent file .claude/agents/$agent.md" >&2; exit 3; fi
echo "start $agent $role" >> "$ctl/calls.log"
if [ -f "$ctl/slow-$agent" ]; then rm -f "$ctl/slow-$agent"; sleep 30; fi
if [ -f "$ctl/pause-$agent" ]; then sleep 2; fi
mkdir -p "$dir"
case "$agent" in
build-analyst) mkdir -p "$dir/specs"; echo "# Requirements" > "$dir/specs/requirements.md"; text='Requirements written.\n\nBRIEF: a greeter that says hello';;
build-architect) echo "# Architecture" > "$dir/specs/architecture.md"; text='Architecture written.';;
build-test-writer) mkdir -p "$dir/tests"; echo 'test "$(sh src/main.sh)" = hello' > "$dir/tests/greet_test.sh"; text='Tests written.';;
build-developer) mkdir -p "$dir/src"; echo 'echo hello' > "$dir/src/main.sh"; text="Code written ($role).";;
build-qa)
  mark="$ctl/qa-failed-$(basename "$dir")"
  if [ ! -f "$mark" ]; then touch "$mark"; text='Two tests fail.\nVERDICT: fail the greeting is missing'
  else mkdir -p "$dir/qa"; echo "all green" > "$dir/qa/report.md"; text='All tests pass.\nVERDICT: pass'; fi;;
build-reviewer)
  if [ -f "$ctl/reviewer-fails" ]; then text='VERDICT: fail the names are unclear'
  else mkdir -p "$dir/reviews"; echo "fine" > "$dir/reviews/review.md"; text='Looks good.\nVERDICT: pass'; fi;;
build-delivery) echo "# Greeter" > "$dir/README.md"; text="Packaged.\nSUMMARY: Your greeter is ready in $dir: run sh src/main.sh.";;
*) echo "unknown agent $agent" >&2; exit 4;;
esac
echo "end $agent $role" >> "$ctl/calls.log"
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s","num_turns":1,"usage":{"input_tokens":10,"output_tokens":5},"total_cost_usd":0.001,"duration_ms":10}\n' "$text" "$$"
`
