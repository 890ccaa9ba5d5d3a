package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/turn"
)

// heldClaude is a memoryClaude whose turn call holds while dir/hold
// exists when its prompt contains HOLDME; every call appends "start
// <last line>" and "end <last line>" to dir/order.log.
func heldClaude(t *testing.T) memoryClaude {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "calls"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := writeClaude(t, dir, `f="`+dir+`/calls/$(date +%s%N)-$$"
printf '%s\n%s' "${resume:--}" "$prompt" > "$f"
echo "start $last" >> "`+dir+`/order.log"
case "$prompt" in
  "Summarize the conversation"*) reply="a conversation";;
  "Extract durable personal facts"*) reply="none";;
  *HOLDME*) while [ -e "`+dir+`/hold" ]; do sleep 0.05; done; reply="echo: $last";;
  *) reply="echo: $last";;
esac
echo "end $last" >> "`+dir+`/order.log"
sess=${resume:-sess-$(date +%s%N)}
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","num_turns":1}\n' "$reply" "$sess"
`)
	return memoryClaude{bin: bin, dir: dir}
}

// orderLog is the held double's start/end lines, oldest first.
func (c memoryClaude) orderLog(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "order.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// logged returns the index of the first order.log line with prefix and
// marker, or -1.
func logged(lines []string, prefix, marker string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix+" ") && strings.Contains(l, marker) {
			return i
		}
	}
	return -1
}

// Two members of a group write at once: the second member's turn waits
// for the first one's provider call (it is acknowledged meanwhile, in the
// group), then resumes the session that call produced with the first
// exchange in its history. A private message of the first member, a
// different chat, runs while the group turn is held.
func TestGroupTurnsRunOneAtATime(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := heldClaude(t)
			claude.set(t, "hold", "")
			api := telegramtest.New(t, tgToken)
			n := startTelegramNode(t, telegramVars(baseVars(t, b, claude.bin), api, "42, 7"))

			first := api.PushText(tgGroup, tgUser, mention+"HOLDME plan GROUPMARK-A")
			waitFor(t, "the first member's call to start", func() bool {
				return logged(claude.orderLog(t), "start", "GROUPMARK-A") >= 0
			})

			second := api.PushText(tgGroup, tgMember, mention+"and me GROUPMARK-B")
			secondTurn := tgTurnID(tgGroup, second)
			waitFor(t, "the second member's message acknowledged or run", func() bool {
				return countType(n.events(t, secondTurn), "AckSent") == 1 || logged(claude.orderLog(t), "start", "GROUPMARK-B") >= 0
			})
			if logged(claude.orderLog(t), "start", "GROUPMARK-B") >= 0 {
				t.Fatalf("the second member's call started while the group's turn ran: %q", claude.orderLog(t))
			}
			waitFor(t, "the busy acknowledgement in the group", func() bool {
				for _, m := range api.Messages(tgGroup) {
					if strings.Contains(m.Text, "I'll get to this next") {
						return true
					}
				}
				return false
			})

			// A different chat of the same member is not held behind the group.
			tgSay(t, n, api, tgUser, tgUser, "PRIVMARK while the group waits")
			if logged(claude.orderLog(t), "end", "GROUPMARK-A") >= 0 {
				t.Fatalf("the group's call ended while held: %q", claude.orderLog(t))
			}

			if err := os.Remove(filepath.Join(claude.dir, "hold")); err != nil {
				t.Fatal(err)
			}
			firstEvs := n.waitTurn(t, tgTurnID(tgGroup, first))
			secondEvs := n.waitTurn(t, secondTurn)
			lines := claude.orderLog(t)
			if end, start := logged(lines, "end", "GROUPMARK-A"), logged(lines, "start", "GROUPMARK-B"); start < end {
				t.Fatalf("the second member's call started before the first one's returned: %q", lines)
			}
			var secondCall memoryCall
			for _, c := range claude.turnCalls(t) {
				if strings.Contains(c.prompt, "GROUPMARK-B") {
					secondCall = c
				}
			}
			session := payload[turn.ProviderReplied](t, n, firstEvs).SessionID
			if session == "" || secondCall.resume != session {
				t.Fatalf("the second member's call resumed %q, want the first call's session %q", secondCall.resume, session)
			}
			ctx, err := n.rt.PromptTexts.Resolve(t.Context(), secondTurn, payload[turn.ContextBuilt](t, n, secondEvs))
			if err != nil {
				t.Fatal(err)
			}
			var history []string
			for _, h := range ctx.History {
				history = append(history, h.Text)
			}
			if joined := strings.Join(history, "\n"); !strings.Contains(joined, "GROUPMARK-A") || strings.Contains(joined, "PRIVMARK") {
				t.Fatalf("the second member's history lacks the first exchange (or holds a private one): %q", history)
			}
		})
	}
}

// With OMEGA_COALESCE_WINDOW set, a member's messages in a row in a group
// become one turn, but another member's message that follows them stays a
// turn of its own: one member's words never go to the model as another's.
func TestGroupBurstStaysOneMembers(t *testing.T) {
	b := backends()[0]
	claude := heldClaude(t)
	api := telegramtest.New(t, tgToken)
	vars := baseVars(t, b, claude.bin)
	vars["OMEGA_COALESCE_WINDOW"] = "2s"
	n := startTelegramNode(t, telegramVars(vars, api, "42, 7"))

	one := api.PushText(tgGroup, tgUser, mention+"BURST-one")
	two := api.PushText(tgGroup, tgUser, mention+"BURST-two")
	three := api.PushText(tgGroup, tgMember, mention+"BURST-three")
	statuses := make([]string, 0, 3)
	for _, id := range []int64{one, two, three} {
		evs := n.waitTurn(t, tgTurnID(tgGroup, id))
		statuses = append(statuses, payload[turn.TurnCompleted](t, n, evs).Status)
	}
	if want := []string{turn.StatusOK, turn.StatusMerged, turn.StatusOK}; strings.Join(statuses, ",") != strings.Join(want, ",") {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	calls := claude.turnCalls(t)
	if len(calls) != 2 {
		t.Fatalf("%d provider calls, want the first member's burst and the second member's message", len(calls))
	}
	if p := calls[0].prompt; !strings.Contains(p, "BURST-one") || !strings.Contains(p, "BURST-two") || strings.Contains(p, "BURST-three") {
		t.Fatalf("the first member's burst call:\n%s", p)
	}
	if p := calls[1].prompt; !strings.Contains(p, "BURST-three") || !strings.Contains(p, "a member of this group chat") {
		t.Fatalf("the second member's call:\n%s", p)
	}
}
