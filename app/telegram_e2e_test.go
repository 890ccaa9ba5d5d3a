package app_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/turn"
)

const (
	tgUser     int64 = 42
	tgStranger int64 = 99
)

// The Telegram channel in the running pipeline, against a Bot API double
// and the fake claude: formatting, photos, chunking, flood control, a
// blocked bot, the allowlist and a restart. One node per backend runs the
// cases in order, as one user's day would.
func TestTelegramEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, promptLog := richClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42, 7")
			n := startTelegramNode(t, vars)

			t.Run("markdown reply as HTML", func(t *testing.T) { tgMarkdownReply(t, n, api) })
			t.Run("flood control then success", func(t *testing.T) { tgFloodControl(t, n, api) })
			t.Run("long reply in ordered chunks", func(t *testing.T) { tgLongReply(t, n, api) })
			t.Run("photo saved, referenced, removed", func(t *testing.T) { tgPhoto(t, n, api, promptLog) })
			t.Run("blocked bot is audited once", func(t *testing.T) { tgBlocked(t, n, api) })
			t.Run("stranger denied", func(t *testing.T) { tgStrangerDenied(t, n, api) })
			t.Run("restart replays no update", func(t *testing.T) { tgRestart(t, n, api, vars) })
		})
	}
}

func tgMarkdownReply(t *testing.T, n *tgNode, api *telegramtest.Server) {
	id := api.PushText(tgUser, tgUser, "format this MDTEST")
	evs := n.waitTurn(t, tgTurnID(tgUser, id))
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
		t.Fatalf("status %s: %s", got, eventTypes(evs))
	}
	msgs := api.Messages(tgUser)
	if len(msgs) != 2 { // welcome, reply
		t.Fatalf("%d messages, want welcome and reply: %+v", len(msgs), msgs)
	}
	reply := msgs[1]
	want := "Here is <b>bold</b> text and code:\n\n<pre><code class=\"language-go\">fmt.Println(1 &lt; 2)</code></pre>"
	if reply.ParseMode != "HTML" || reply.Text != want {
		t.Fatalf("reply parse_mode %q text %q, want HTML %q", reply.ParseMode, reply.Text, want)
	}
	sent := payload[turn.ReplySent](t, n, evs)
	if sent.Chunks != 1 || sent.PlainText || len(sent.PlatformIDs) != 1 {
		t.Fatalf("ReplySent %+v", sent)
	}
}

func tgFloodControl(t *testing.T, n *tgNode, api *telegramtest.Server) {
	before := len(sendMessages(api, tgUser))
	api.FailNext("sendMessage", 1, 429, 1)
	id := api.PushText(tgUser, tgUser, "are you there")
	evs := n.waitTurn(t, tgTurnID(tgUser, id))
	calls := sendMessages(api, tgUser)[before:]
	if len(calls) != 2 || calls[0].Accepted() || !strings.Contains(calls[0].Error, "retry after 1") || !calls[1].Accepted() {
		t.Fatalf("calls after a 429: %+v", calls)
	}
	if calls[0].Text != calls[1].Text || calls[1].Text != "echo: are you there" {
		t.Fatalf("retried %q, then %q", calls[0].Text, calls[1].Text)
	}
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
		t.Fatalf("status %s", got)
	}
}

func tgLongReply(t *testing.T, n *tgNode, api *telegramtest.Server) {
	before := len(api.Messages(tgUser))
	id := api.PushText(tgUser, tgUser, "LONGTEST please")
	evs := n.waitTurn(t, tgTurnID(tgUser, id))
	chunks := api.Messages(tgUser)[before:]
	sent := payload[turn.ReplySent](t, n, evs)
	if len(chunks) < 3 || sent.Chunks != len(chunks) || len(sent.PlatformIDs) != len(chunks) {
		t.Fatalf("%d chunks sent, ReplySent %d chunks / %d ids", len(chunks), sent.Chunks, len(sent.PlatformIDs))
	}
	var all strings.Builder
	for i, c := range chunks {
		if l := len(utf16.Encode([]rune(c.Text))); l > 4096 {
			t.Fatalf("chunk %d is %d UTF-16 units long", i+1, l)
		}
		all.WriteString(strings.TrimSpace(c.Text))
		all.WriteString("\n")
	}
	// Every line arrives once, whole and in order.
	lines := strings.Split(strings.TrimSpace(all.String()), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines arrived, want 200", len(lines))
	}
	for i, l := range lines {
		if want := fmt.Sprintf("Line %04d %s", i+1, strings.Repeat("x", 39)); l != want {
			t.Fatalf("line %d = %q, want %q", i+1, l, want)
		}
	}
}

func tgPhoto(t *testing.T, n *tgNode, api *telegramtest.Server, promptLog string) {
	photo := []byte("\xff\xd8\xff\xe0 a tiny jpeg")
	api.AddFile("photo-big", photo)
	api.AddFile("photo-small", []byte("thumb"))
	msg := telegramtest.Message(tgUser, tgUser, "")
	msg["caption"] = "what is in this picture"
	msg["photo"] = []map[string]any{
		{"file_id": "photo-small", "file_unique_id": "s1", "width": 90, "height": 60},
		{"file_id": "photo-big", "file_unique_id": "b1", "width": 1280, "height": 960},
	}
	id := api.PushUpdate(map[string]any{"message": msg})
	tn := tgTurnID(tgUser, id)
	evs := n.waitTurn(t, tn)

	received := payload[turn.MessageReceived](t, n, evs)
	if len(received.Attachments) != 1 {
		t.Fatalf("attachments %+v", received.Attachments)
	}
	att := received.Attachments[0]
	if att.Size != int64(len(photo)) || !strings.HasPrefix(att.MIME, "image/") || !strings.Contains(att.Path, "inbox") {
		t.Fatalf("attachment %+v: not the largest size saved in the inbox", att)
	}
	prompts, err := os.ReadFile(promptLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prompts), "[Attached image: "+att.Path+"]") {
		t.Fatalf("the provider never saw the image path %s", att.Path)
	}
	if _, err := os.Stat(att.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("attachment still on disk after the turn: %v", err)
	}
	removed := payload[turn.AttachmentsRemoved](t, n, evs)
	if len(removed.Paths) != 1 || removed.Paths[0] != att.Path {
		t.Fatalf("AttachmentsRemoved %+v", removed)
	}
}

func tgBlocked(t *testing.T, n *tgNode, api *telegramtest.Server) {
	before := len(sendMessages(api, tgUser))
	api.FailNext("sendMessage", 1, 403, 0)
	id := api.PushText(tgUser, tgUser, "still there?")
	tn := tgTurnID(tgUser, id)
	evs := n.waitTurn(t, tn)
	failed := payload[turn.ReplyFailed](t, n, evs)
	if failed.Class != "blocked" || !strings.Contains(failed.Error, "blocked") || strings.Contains(failed.Error, tgToken) {
		t.Fatalf("ReplyFailed %+v", failed)
	}
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusUndelivered {
		t.Fatalf("status %s", got)
	}
	waitFor(t, "the audit row", func() bool {
		return n.queryInt(t, `SELECT count(*) FROM audit WHERE turn_id = $1`, tn) == 1
	})
	if got := n.queryInt(t, `SELECT count(*) FROM audit WHERE turn_id = $1 AND status = 'undelivered'`, tn); got != 1 {
		t.Fatal("the blocked reply is not audited as undelivered")
	}
	// No retry storm: one refused attempt, nothing after it.
	time.Sleep(300 * time.Millisecond)
	if calls := sendMessages(api, tgUser)[before:]; len(calls) != 1 || calls[0].Accepted() {
		t.Fatalf("%d sendMessage calls for a blocked chat, want 1 refused: %+v", len(calls), calls)
	}
}

func tgStrangerDenied(t *testing.T, n *tgNode, api *telegramtest.Server) {
	id := api.PushText(tgStranger, tgStranger, "hello, who are you")
	evs := n.waitTurn(t, tgTurnID(tgStranger, id))
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusDenied {
		t.Fatalf("status %s", got)
	}
	// Pairing is on by default: the stranger gets a code, the owner (the
	// first allowed user) is told of it.
	offer := payload[turn.AccessDenied](t, n, evs).Pairing
	msgs := api.Messages(tgStranger)
	if offer == nil || len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Your pairing code is "+offer.Code) {
		t.Fatalf("stranger got %+v (offer %+v)", msgs, offer)
	}
	if owner := api.Messages(tgUser); !strings.Contains(owner[len(owner)-1].Text, "/pair approve "+offer.Code) {
		t.Fatalf("owner got %+v", owner[len(owner)-1])
	}
	if countType(evs, "ProviderCalled") != 0 {
		t.Fatal("the provider was called for a stranger")
	}
}

// A new process on the same database, and Telegram delivering the same
// message again (the previous process stopped before confirming it): the
// message is recognised and not answered twice.
func tgRestart(t *testing.T, n *tgNode, api *telegramtest.Server, vars map[string]string) {
	msg := telegramtest.Message(tgUser, tgUser, "remember me once")
	msg["message_id"] = 777
	api.PushUpdate(map[string]any{"message": msg})
	tn := tgTurnID(tgUser, 777)
	n.waitTurn(t, tn)
	replies := len(api.Messages(tgUser))
	n.stop()

	n2 := startTelegramNode(t, vars)
	api.PushUpdate(map[string]any{"message": msg}) // same message, new update id
	waitFor(t, "the new process to consume the update", func() bool { return api.Pending() == 0 })
	// One more exchange proves the new process is answering; the old
	// message stays answered once.
	id := api.PushText(tgUser, tgUser, "after restart")
	n2.waitTurn(t, tgTurnID(tgUser, id))
	evs := n2.events(t, tn)
	if c := countType(evs, "MessageReceived"); c != 1 || countType(evs, "ProviderCalled") != 1 || countType(evs, "ReplySent") != 1 {
		t.Fatalf("redelivered message replayed: %s", eventTypes(evs))
	}
	after := api.Messages(tgUser)[replies:]
	if len(after) != 1 || after[0].Text != "echo: after restart" {
		t.Fatalf("messages after restart %+v", after)
	}
}
