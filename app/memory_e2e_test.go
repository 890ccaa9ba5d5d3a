package app_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
)

// memoryClaude is a Claude Code double for conversations and their
// summaries. Every call is kept as a file in dir/calls: its first line is
// the --resume session ("-" for none), the rest the -p prompt. A summary
// request waits while dir/hold exists and answers with dir/summary; a
// facts request answers "none"; a turn answers "echo: <last line>" on its
// session (the resumed one, or a new one).
type memoryClaude struct{ bin, dir string }

func newMemoryClaude(t *testing.T) memoryClaude {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "calls"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := writeClaude(t, dir, `f="`+dir+`/calls/$(date +%s%N)-$$"
printf '%s\n%s' "${resume:--}" "$prompt" > "$f"
case "$prompt" in
  "Summarize the conversation"*)
    while [ -e "`+dir+`/hold" ]; do sleep 0.05; done
    reply=$(cat "`+dir+`/summary" 2>/dev/null || echo "a conversation");;
  "Extract durable personal facts"*) reply="none";;
  *) reply="echo: $last";;
esac
sess=${resume:-sess-$(date +%s%N)}
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","num_turns":1}\n' "$reply" "$sess"
`)
	return memoryClaude{bin: bin, dir: dir}
}

func (c memoryClaude) set(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// memoryCall is one recorded call of a turn (not a summary or facts one).
type memoryCall struct{ resume, prompt string }

// turnCalls are the recorded turn calls, oldest first.
func (c memoryClaude) turnCalls(t *testing.T) []memoryCall {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []memoryCall
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(c.dir, "calls", name))
		if err != nil {
			t.Fatal(err)
		}
		resume, prompt, _ := strings.Cut(string(b), "\n")
		if strings.HasPrefix(prompt, "Summarize the conversation") || strings.HasPrefix(prompt, "Extract durable personal facts") {
			continue
		}
		out = append(out, memoryCall{resume, prompt})
	}
	return out
}

func (c memoryClaude) lastTurnCall(t *testing.T) memoryCall {
	t.Helper()
	calls := c.turnCalls(t)
	if len(calls) == 0 {
		t.Fatal("no turn call recorded")
	}
	return calls[len(calls)-1]
}

// A conversation that went idle is not resumed: the next message starts a
// fresh Claude Code session (no --resume) even while the summarizer is
// still writing the old conversation's summary; once the summary is
// written, the next conversation's prompt carries it, again without
// --resume.
func TestClosedConversationIsNotResumedAndItsSummaryIsInTheNextContext(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			// The summarizer is held inside its provider call so that the
			// next message comes while the old conversation is idle but not
			// closed. On PostgreSQL this also proves that a summary in
			// progress does not hold back the turns (its command's delivery
			// transaction is not open during the call).
			claude.set(t, "hold", "")
			claude.set(t, "summary", "Ana planned a trip to Porto in May.")
			vars := baseVars(t, b, claude.bin)
			vars["OMEGA_CONVERSATION_IDLE"] = "1s"
			n := startNode(t, vars)
			// A failing test must not leave the summarizer held at shutdown.
			t.Cleanup(func() { _ = os.Remove(filepath.Join(claude.dir, "hold")) })

			first := say(t, n, "ana", "hello, I am planning a trip to Porto", "20s")
			second := say(t, n, "ana", "in May", "20s")
			if first.Status != turn.StatusOK || second.Status != turn.StatusOK {
				t.Fatalf("turns: %+v %+v", first, second)
			}
			if c := claude.lastTurnCall(t); c.resume == "-" {
				t.Fatalf("the second message of a conversation did not resume its session")
			}
			conv := contextOf(t, n, first.TurnID).ConversationID
			waitFor(t, "the summary requested", func() bool {
				return countType(streamEvents(t, n, summary.SummaryStream(conv)), "SummaryRequested") == 1
			})
			third := say(t, n, "ana", "a new topic", "20s")
			c := contextOf(t, n, third.TurnID)
			if c.ConversationID == conv || c.SessionID != "" || c.Continuation {
				t.Fatalf("after the idle time: conversation %s (was %s), session %q", c.ConversationID, conv, c.SessionID)
			}
			if call := claude.lastTurnCall(t); call.resume != "-" {
				t.Fatalf("the idle conversation's session %s was resumed", call.resume)
			}
			if !hasSessionCleared(t, n, "ana", "conversation idle") {
				t.Fatal("no SessionCleared for the idle conversation")
			}
			// Let both conversations close; the next one carries the summaries.
			if err := os.Remove(filepath.Join(claude.dir, "hold")); err != nil {
				t.Fatal(err)
			}
			conv2 := c.ConversationID
			waitFor(t, "both conversations summarized", func() bool {
				return queryInt(t, n, `SELECT COUNT(*) FROM summaries WHERE conversation_id IN ($1, $2)`, conv, conv2) == 2
			})
			fourth := say(t, n, "ana", "what next?", "20s")
			call := claude.lastTurnCall(t)
			if call.resume != "-" {
				t.Fatalf("a closed conversation's session %s was resumed", call.resume)
			}
			if !strings.Contains(call.prompt, "Recent conversation summaries:\n- Ana planned a trip to Porto in May.") {
				t.Fatalf("the next conversation's prompt lacks the summary:\n%s", call.prompt)
			}
			if c := contextOf(t, n, fourth.TurnID); c.Continuation || len(c.History) != 0 {
				t.Fatalf("the new conversation continued: %+v", c)
			}
		})
	}
}

func hasSessionCleared(t *testing.T, n *node, snd, reason string) bool {
	t.Helper()
	for _, e := range streamEvents(t, n, sender.SenderStream("http", snd)) {
		if e.Type == (sender.SessionCleared{}).EventType() && strings.Contains(string(e.Data), `"`+reason+`"`) {
			return true
		}
	}
	return false
}

// A recall keyword brings back an older conversation's summary that
// matches the message, beside the most recent ones, on a resumed session
// too; a message without a recall keyword gets no summaries mid-conversation.
func TestOlderSummaryIsRecalledByAMatchingKeyword(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			n := startNode(t, baseVars(t, b, claude.bin))
			ctx := context.Background()
			// Five closed conversations, the Porto one the oldest: the three
			// most recent do not include it.
			for i, s := range []string{"Ana planned a trip to Porto in May.", "Ana asked about tomatoes.",
				"Ana fixed her bicycle.", "Ana wrote a poem.", "Ana read a novel."} {
				id := "old-conversation-" + string(rune('a'+i))
				evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id},
					turn.ConversationClosed{ConversationID: id, Sender: "http-ana", Summary: s, Messages: 2, Reason: "idle"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := n.rt.Store.Append(ctx, summary.SummaryStream(id), 0, evs...); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond) // distinct closing times
			}
			say(t, n, "ana", "hello", "20s")
			waitFor(t, "the summaries in the read model", func() bool {
				return queryInt(t, n, `SELECT COUNT(*) FROM summaries WHERE sender = 'http-ana'`) == 5
			})
			plain := say(t, n, "ana", "how are you?", "20s")
			if c := claude.lastTurnCall(t); c.resume == "-" || strings.Contains(c.prompt, "conversation summaries") {
				t.Fatalf("a plain message mid-conversation: resume %q, prompt:\n%s", c.resume, c.prompt)
			}
			_ = plain
			say(t, n, "ana", "do you remember the Porto trip?", "20s")
			c := claude.lastTurnCall(t)
			if c.resume == "-" {
				t.Fatal("the recall did not resume the conversation's session")
			}
			for _, want := range []string{"Ana planned a trip to Porto in May.", "Ana read a novel.", "Ana wrote a poem.", "Ana fixed her bicycle."} {
				if !strings.Contains(c.prompt, "- "+want) {
					t.Fatalf("the recall prompt lacks %q:\n%s", want, c.prompt)
				}
			}
			if strings.Contains(c.prompt, "tomatoes") {
				t.Fatalf("an old summary that does not match was recalled:\n%s", c.prompt)
			}
		})
	}
}
