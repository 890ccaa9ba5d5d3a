package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers/providertest"
)

// A reply streamed by the OpenAI-compatible provider through Telegram,
// with a marker line in its middle: one visible message whose final text
// is the whole reply without the marker, shown growing (as drafts, or as
// edits of that message on a Bot API without drafts), and no draft, edit
// or message ever showing the marker.
func TestStreamedReplyOverTelegram(t *testing.T) {
	const chat int64 = 4242
	words := func(prefix string, n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = prefix + string(rune('a'+i%26))
		}
		return strings.Join(w, " ")
	}
	text := words("first", 25) + ".\nLANG_SWITCH: de\n" + words("second", 25) + "."
	want := markers.Parse(text).Text
	if strings.Contains(want, "LANG_SWITCH") || want == text {
		t.Fatalf("the marker is not stripped from the reply: %q", want)
	}
	plan := providertest.StreamPlan{FirstToken: 100 * time.Millisecond, Every: 40 * time.Millisecond, Text: text}
	for _, tc := range []struct {
		name   string
		drafts telegramtest.DraftSupport
	}{
		{"drafts", telegramtest.DraftsSupported},
		{"edits", telegramtest.DraftsUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := startTelegramStreaming(t, plan, tc.drafts, "on", []int64{chat})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			st, err := rig.reply(ctx, chat, "tell me something")
			if err != nil {
				t.Fatal(err)
			}
			if st.visible != 2 { // the welcome, and the reply
				t.Fatalf("%d messages were added to the chat, want the welcome and one reply: %+v", st.visible, rig.api.VisibleMessages(chat))
			}
			if st.text != want {
				t.Fatalf("the reply shows %q, want %q", st.text, want)
			}
			assertShownGrowing(t, rig.api, chat, tc.drafts, want)
			for _, c := range rig.api.ChatCalls(chat, replyMethods...) {
				if strings.Contains(c.Text, "LANG_SWITCH") {
					t.Fatalf("%s showed the marker: %q", c.Method, c.Text)
				}
			}
			evs := rig.node.waitTurn(t, tgTurnID(chat, 1))
			if countType(evs, turn.ReplyStreamStarted{}.EventType()) != 1 {
				t.Fatalf("the turn recorded no ReplyStreamStarted: %s", eventTypes(evs))
			}
		})
	}
}

// assertShownGrowing checks that the reply was shown before it was whole:
// a draft shorter than the reply, or an edited reply message whose first
// version was shorter.
func assertShownGrowing(t *testing.T, api *telegramtest.Server, chat int64, drafts telegramtest.DraftSupport, want string) {
	t.Helper()
	if drafts == telegramtest.DraftsSupported {
		d := api.Drafts(chat)
		if len(d) == 0 || len(d[0].Text) >= len(want) || !strings.HasPrefix(want, d[0].Text) {
			t.Fatalf("drafts %+v, want a first draft that begins the reply %q", d, want)
		}
		return
	}
	if d := api.Drafts(chat); len(d) != 0 {
		t.Fatalf("drafts shown on a Bot API without them: %+v", d)
	}
	vis := api.VisibleMessages(chat)
	h := vis[len(vis)-1].History
	if len(h) < 2 || len(h[0]) >= len(want) || !strings.HasPrefix(want, h[0]) {
		t.Fatalf("the reply message's versions %q, want it edited from a beginning of %q", h, want)
	}
}
