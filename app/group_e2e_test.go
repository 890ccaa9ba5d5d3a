package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/providers/providertest"
)

const (
	tgGroup  int64 = -100555
	tgMember int64 = 7 // a second allowed user, in the group
	mention        = "@" + telegramtest.BotUsername + " "
)

// An allowed user talks to omega in private, then mentions it in a group:
// the group turn starts the group's own conversation and Claude Code
// session (no --resume of the private one, none of the private history),
// under the group rules; another member's turn in the group resumes the
// group's session and joins its conversation; back in private, the private
// session resumes and nothing of the group is in it.
func TestGroupTurnsKeepTheGroupsOwnConversation(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			api := telegramtest.New(t, tgToken)
			n := startTelegramNode(t, telegramVars(baseVars(t, b, claude.bin), api, "42, 7"))

			tgSay(t, n, api, tgUser, tgUser, "my secret is PRIVMARK-one")
			private := tgSay(t, n, api, tgUser, tgUser, "and PRIVMARK-two")
			privateSession := claude.lastTurnCall(t).resume
			if privateSession == "-" || private.SessionID != privateSession {
				t.Fatalf("the private conversation did not resume its session: %q, context %q", privateSession, private.SessionID)
			}

			group := tgSay(t, n, api, tgGroup, tgUser, mention+"hello GROUPMARK-one")
			call := claude.lastTurnCall(t)
			if call.resume != "-" {
				t.Fatalf("the group turn resumed session %s (the private one is %s)", call.resume, privateSession)
			}
			assertGroupPrompt(t, call.prompt)
			if group.ConversationID == private.ConversationID || len(group.History) != 0 || group.SessionID != "" {
				t.Fatalf("the group turn joined the private conversation %s: %+v", private.ConversationID, group)
			}
			if got := api.Messages(tgGroup); len(got) != 1 || !strings.Contains(got[0].Text, "GROUPMARK-one") {
				t.Fatalf("group chat got %+v", got)
			}

			second := tgSay(t, n, api, tgGroup, tgMember, mention+"and me GROUPMARK-two")
			call = claude.lastTurnCall(t)
			if call.resume == "-" || call.resume == privateSession || second.SessionID != call.resume {
				t.Fatalf("the second member's turn resumed %q, want the group's session", call.resume)
			}
			assertGroupPrompt(t, call.prompt)
			if !strings.Contains(call.prompt, "This message is from User, a member of this group chat.") {
				t.Fatalf("the resumed group prompt does not say who is talking:\n%s", call.prompt)
			}
			if second.ConversationID != group.ConversationID || len(second.History) != 2 {
				t.Fatalf("the second member is not in the group's conversation %s: %+v", group.ConversationID, second)
			}

			back := tgSay(t, n, api, tgUser, tgUser, "back in private")
			call = claude.lastTurnCall(t)
			if call.resume != privateSession || back.ConversationID != private.ConversationID || strings.Contains(call.prompt, "GROUPMARK") {
				t.Fatalf("back in private: resumed %q (want %s), conversation %s (want %s), prompt:\n%s",
					call.resume, privateSession, back.ConversationID, private.ConversationID, call.prompt)
			}
			for _, h := range back.History {
				if strings.Contains(h.Text, "GROUPMARK") {
					t.Fatalf("the group's exchange is in the private history: %+v", back.History)
				}
			}
		})
	}
}

// With an HTTP API provider (no sessions: the whole conversation goes with
// each call) the group call's messages hold none of the private ones, its
// system prompt the group rules, and the second member's call the group's
// earlier exchange.
func TestGroupTurnsSendNoPrivateMessagesToTheAPI(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				reqs []providertest.MessagesRequest
			)
			srv := providertest.NewAnthropicServer(t, func(r providertest.MessagesRequest) (int, string, map[string]string) {
				mu.Lock()
				defer mu.Unlock()
				reqs = append(reqs, r)
				last := r.Messages[len(r.Messages)-1].Content
				return http.StatusOK, providertest.AnthropicReply(r.Model, "echo: "+last), nil
			})
			lastRequest := func() providertest.MessagesRequest {
				mu.Lock()
				defer mu.Unlock()
				return reqs[len(reqs)-1]
			}
			api := telegramtest.New(t, tgToken)
			vars := baseVars(t, b, "")
			vars["OMEGA_PROVIDER"], vars["OMEGA_ANTHROPIC_API_KEY"], vars["OMEGA_ANTHROPIC_BASE_URL"] = "anthropic", "test-key", srv.URL
			n := startTelegramNode(t, telegramVars(vars, api, "42, 7"))

			tgSay(t, n, api, tgUser, tgUser, "my secret is PRIVMARK-one")
			tgSay(t, n, api, tgUser, tgUser, "and PRIVMARK-two")
			if got := messagesText(lastRequest()); !strings.Contains(got, "PRIVMARK-one") {
				t.Fatalf("the private conversation's history is not sent: %s", got)
			}

			tgSay(t, n, api, tgGroup, tgUser, mention+"hello GROUPMARK-one")
			req := lastRequest()
			if got := messagesText(req); strings.Contains(got, "PRIVMARK") || len(req.Messages) != 1 {
				t.Fatalf("the group call's messages: %s", got)
			}
			assertGroupPrompt(t, req.System)

			tgSay(t, n, api, tgGroup, tgMember, mention+"and me GROUPMARK-two")
			req = lastRequest()
			got := messagesText(req)
			if strings.Contains(got, "PRIVMARK") || !strings.Contains(got, "GROUPMARK-one") || len(req.Messages) != 3 {
				t.Fatalf("the second member's call should hold the group's exchange and nothing private: %s", got)
			}
			assertGroupPrompt(t, req.System)
		})
	}
}

// assertGroupPrompt checks that a prompt is a group's: the group rules,
// nothing said in private and no private fact.
func assertGroupPrompt(t *testing.T, prompt string) {
	t.Helper()
	if !strings.Contains(prompt, "Group chat rules:") || !strings.Contains(prompt, "reply with exactly SILENT") {
		t.Fatalf("the group rules are missing:\n%s", prompt)
	}
	if strings.Contains(prompt, "PRIVMARK") || strings.Contains(prompt, "User profile:") {
		t.Fatalf("private text in the group's prompt:\n%s", prompt)
	}
}

func messagesText(r providertest.MessagesRequest) string {
	b, _ := json.Marshal(r.Messages)
	return string(b)
}

// A message that matches no keyword ("what's my favorite color") still
// carries the recorded facts, up to the profile's bound of 40 facts: the
// rest are counted, not sent.
func TestFactsReachEveryFullPrompt(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			api := telegramtest.New(t, tgToken)
			n := startTelegramNode(t, telegramVars(baseVars(t, b, claude.bin), api, "42, 7"))
			ctx := context.Background()
			record := func(snd int64, key, value string) {
				t.Helper()
				if err := n.rt.Senders.RecordFact(ctx, &senders.RecordFact{Channel: "telegram", SenderID: fmt.Sprint(snd), Key: key, Value: value, Source: "cli"}); err != nil {
					t.Fatal(err)
				}
			}
			facts := map[string]string{"favorite_color": "teal", "city": "Lisbon", "pet": "a cat named Miso",
				"job": "nurse", "sister": "Ana", "diet": "vegetarian", "timezone": "Europe/Lisbon"}
			for k, v := range facts {
				record(tgUser, k, v)
			}
			tgSay(t, n, api, tgUser, tgUser, "what's my favorite color")
			prompt := claude.lastTurnCall(t).prompt
			for k, v := range facts {
				if !strings.Contains(prompt, "- "+k+": "+v+"\n") {
					t.Errorf("fact %s missing from the prompt:\n%s", k, prompt)
				}
			}

			for i := range 45 {
				record(tgMember, fmt.Sprintf("note_%02d", i), fmt.Sprintf("remembered thing %02d", i))
			}
			tgSay(t, n, api, tgMember, tgMember, "hello there")
			prompt = claude.lastTurnCall(t).prompt
			if got := strings.Count(prompt, "\n- note_"); got != 40 || !strings.Contains(prompt, "\n(5 more facts not shown)") {
				t.Fatalf("%d facts sent, want 40 and 5 counted:\n%s", got, prompt)
			}
		})
	}
}

// tgSay sends a Telegram message from a user in a chat, waits for its
// turn and returns the context the provider was given.
func tgSay(t *testing.T, n *tgNode, api *telegramtest.Server, chat, from int64, text string) turn.ContextBuilt {
	t.Helper()
	id := api.PushText(chat, from, text)
	tn := tgTurnID(chat, id)
	evs := n.waitTurn(t, tn)
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
		t.Fatalf("turn %q: status %s: %s", text, got, eventTypes(evs))
	}
	c, err := n.rt.PromptTexts.Resolve(context.Background(), tn, payload[turn.ContextBuilt](t, n, evs))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A group conversation that went idle is summarized under the group: the
// summary comes back in the group's next conversation and never in a
// private one, no fact is extracted from the members' mixed transcript,
// and the group's session is cleared.
func TestGroupConversationSummaryStaysInTheGroup(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude := newMemoryClaude(t)
			claude.set(t, "summary", "The group planned GROUP-SUMMARY.")
			api := telegramtest.New(t, tgToken)
			vars := baseVars(t, b, claude.bin)
			vars["OMEGA_CONVERSATION_IDLE"] = "1s"
			n := startTelegramNode(t, telegramVars(vars, api, "42, 7"))

			group := tgSay(t, n, api, tgGroup, tgUser, mention+"let us plan GROUPMARK")
			groupKey := fmt.Sprintf("telegram-group:%d", tgGroup) // the group's own key beside its members'
			waitFor(t, "the group conversation summarized", func() bool {
				return n.queryInt(t, `SELECT COUNT(*) FROM summaries WHERE conversation_id = $1 AND sender = $2`, group.ConversationID, groupKey) == 1
			})

			tgSay(t, n, api, tgUser, tgUser, "hello in private")
			if p := claude.lastTurnCall(t).prompt; strings.Contains(p, "GROUP-SUMMARY") || strings.Contains(p, "GROUPMARK") {
				t.Fatalf("the group's conversation reached a private prompt:\n%s", p)
			}
			tgSay(t, n, api, tgGroup, tgMember, mention+"what did we plan?")
			if call := claude.lastTurnCall(t); call.resume != "-" || !strings.Contains(call.prompt, "The group planned GROUP-SUMMARY.") {
				t.Fatalf("the group's next conversation (resume %q) lacks its summary:\n%s", call.resume, call.prompt)
			}
			var cleared bool
			evs, err := n.rt.Store.Load(context.Background(), "sender-"+groupKey, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Type == (sender.FactRecorded{}).EventType() {
					t.Fatalf("a fact recorded on the group: %s", e.Data)
				}
				cleared = cleared || e.Type == (sender.SessionCleared{}).EventType()
			}
			if !cleared {
				t.Fatalf("the group's session was not cleared: %s", eventTypes(evs))
			}
			// `omega replay --verify`: the read models rebuilt from the log
			// are the ones the running process built.
			if diffs, err := n.rt.Engine.Verify(context.Background(), app.Projections(), nil); err != nil || len(diffs) > 0 {
				t.Fatalf("replay differs: %v %v", diffs, err)
			}
		})
	}
}

// /forget in a group closes the group's conversation and session, which
// its members share, and leaves the sender's private one alone.
func TestForgetInAGroupForgetsTheGroup(t *testing.T) {
	b := backends()[0]
	claude := newMemoryClaude(t)
	api := telegramtest.New(t, tgToken)
	n := startTelegramNode(t, telegramVars(baseVars(t, b, claude.bin), api, "42, 7"))

	private := tgSay(t, n, api, tgUser, tgUser, "hello in private")
	tgSay(t, n, api, tgUser, tgUser, "still private")
	privateSession := claude.lastTurnCall(t).resume
	group := tgSay(t, n, api, tgGroup, tgUser, mention+"hello group")

	id := api.PushText(tgGroup, tgMember, "/forget@"+telegramtest.BotUsername)
	if evs := n.waitTurn(t, tgTurnID(tgGroup, id)); countType(evs, "CommandAnswered") != 1 {
		t.Fatalf("/forget in the group was not answered as a command: %s", eventTypes(evs))
	}

	again := tgSay(t, n, api, tgGroup, tgUser, mention+"hello again")
	if call := claude.lastTurnCall(t); call.resume != "-" || again.ConversationID == group.ConversationID {
		t.Fatalf("after /forget the group resumed %q in conversation %s (was %s)", call.resume, again.ConversationID, group.ConversationID)
	}
	back := tgSay(t, n, api, tgUser, tgUser, "and private again")
	if call := claude.lastTurnCall(t); call.resume != privateSession || back.ConversationID != private.ConversationID {
		t.Fatalf("a group's /forget ended the private conversation: resumed %q (want %s)", call.resume, privateSession)
	}
}

// An action the model scheduled in a group runs, when due, in the group's
// conversation under the group rules: its call carries nothing said in
// private, and its result goes to the group.
func TestGroupActionRunsInTheGroup(t *testing.T) {
	b := backends()[0]
	dir := t.TempDir()
	claude := memoryClaude{dir: dir, bin: writeClaude(t, dir, `mkdir -p "`+dir+`/calls"; f="`+dir+`/calls/$(date +%s%N)-$$"
printf '%s\n%s' "${resume:--}" "$prompt" > "$f"
due=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
case "$last" in
  *ACTION_OUTCOME*) reply='Checked: GROUP-ACTION-DONE\nACTION_OUTCOME: success' ;;
  *ACTNOW*) reply="On it.\nSCHEDULE_ACTION: Check the group calendar | $due | once" ;;
  *) reply="echo: $last" ;;
esac
sess=${resume:-sess-$(date +%s%N)}
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","num_turns":1}\n' "$reply" "$sess"
`)}
	api := telegramtest.New(t, tgToken)
	n := startTelegramNode(t, telegramVars(baseVars(t, b, claude.bin), api, "42, 7"))

	tgSay(t, n, api, tgUser, tgUser, "my secret is PRIVMARK-one")
	tgSay(t, n, api, tgUser, tgUser, "and PRIVMARK-two")
	tgSay(t, n, api, tgGroup, tgUser, mention+"ACTNOW please")
	waitFor(t, "the action's result in the group", func() bool {
		for _, m := range api.Messages(tgGroup) {
			if strings.Contains(m.Text, "GROUP-ACTION-DONE") {
				return true
			}
		}
		return false
	})
	call := claude.lastTurnCall(t)
	if !strings.Contains(call.prompt, "Check the group calendar") || call.resume != "-" {
		t.Fatalf("the last call is not the action's (resume %q):\n%s", call.resume, call.prompt)
	}
	assertGroupPrompt(t, call.prompt)
}
