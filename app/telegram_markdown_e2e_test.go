package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/turn"
)

// markdownClaude writes a Claude Code double whose every reply is md.
func markdownClaude(t *testing.T, md string) string {
	t.Helper()
	res, err := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false,
		"result": md, "session_id": "sess-1", "num_turns": 1})
	if err != nil {
		t.Fatal(err)
	}
	quoted := "'" + strings.ReplaceAll(string(res), "'", `'\''`) + "'"
	return writeClaude(t, t.TempDir(), "printf '%s\\n' "+quoted+"\n")
}

// A reply with a table, a nested list, a link with parentheses and the
// model's own HTML reaches the user as Telegram HTML the Bot API accepts
// (no plain-text fallback): the table as an aligned monospace block, the
// HTML as text.
func TestTelegramMarkdownTablesNestingAndHTML(t *testing.T) {
	const md = "## Stock <today>\n\n" +
		"| Item | Qty |\n|------|----:|\n| Apples & pears | **12** |\n| Figs | 3 |\n\n" +
		"1. Order:\n   - *fresh `figs`*\n2. See [Fig](https://en.wikipedia.org/wiki/Fig_(fruit))\n\n" +
		"<b>not a tag</b>"
	const want = "<b>Stock &lt;today&gt;</b>\n\n" +
		"<pre>Item           | Qty\n---------------+----\nApples &amp; pears | 12\nFigs           | 3</pre>\n\n" +
		"1. Order:\n  • <i>fresh <code>figs</code></i>\n" +
		`2. See <a href="https://en.wikipedia.org/wiki/Fig_(fruit)">Fig</a>` + "\n\n" +
		"&lt;b&gt;not a tag&lt;/b&gt;"
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			n := startTelegramNode(t, telegramVars(baseVars(t, b, markdownClaude(t, md)), api, "42"))
			id := api.PushText(tgUser, tgUser, "what is in stock?")
			evs := n.waitTurn(t, tgTurnID(tgUser, id))
			if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
				t.Fatalf("status %s: %s", got, eventTypes(evs))
			}
			msgs := api.Messages(tgUser)
			if len(msgs) != 2 { // welcome, reply
				t.Fatalf("%d messages, want welcome and reply: %+v", len(msgs), msgs)
			}
			if reply := msgs[1]; reply.ParseMode != "HTML" || !reply.Accepted() || reply.Text != want {
				t.Fatalf("reply parse_mode %q accepted %v text\n%q\nwant\n%q", reply.ParseMode, reply.Accepted(), reply.Text, want)
			}
		})
	}
}
