package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/telegram/tgpreview"
)

const (
	previewChat    = 77
	referenceChat  = 78 // where SendText shows the same reply, for comparison
	firstToken     = 800 * time.Millisecond
	wordInterval   = 25 * time.Millisecond
	wordsPerAnswer = 120
)

// answer is a reply of n words in Markdown, with formatting and
// paragraphs, like a model's.
func answer(n int) string {
	var b strings.Builder
	b.WriteString("**Short answer:** ")
	for i := range n {
		fmt.Fprintf(&b, "word%d ", i)
		if i%40 == 39 {
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// stream plays a model writing text word by word in fake time: the first
// token after firstToken, then one word every wordInterval, each update
// carrying the whole text so far. It fails the test on an Update error.
func stream(t *testing.T, f *fixture, p channels.Preview, text string) {
	t.Helper()
	f.sleeps.advance(firstToken)
	words := strings.SplitAfter(text, " ")
	for i := range words {
		if err := p.Update(t.Context(), strings.Join(words[:i+1], "")); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		f.sleeps.advance(wordInterval)
	}
}

// replyCalls counts the Bot API calls that showed the reply in chat.
func replyCalls(srv *telegramtest.Server, chat int64) int {
	return len(srv.ChatCalls(chat, "sendMessage", "sendMessageDraft", "editMessageText"))
}

// sendTextShows is what SendText makes visible for text.
func sendTextShows(t *testing.T, f *fixture, text string) []string {
	t.Helper()
	if _, err := f.ch.SendText(t.Context(), strconv.Itoa(referenceChat), text); err != nil {
		t.Fatalf("SendText: %v", err)
	}
	return visibleTexts(f.srv, referenceChat)
}

func visibleTexts(srv *telegramtest.Server, chat int64) []string {
	var out []string
	for _, v := range srv.VisibleMessages(chat) {
		out = append(out, v.Text)
	}
	return out
}

func startPreview(t *testing.T, f *fixture) channels.Preview {
	t.Helper()
	p, err := f.ch.StartPreview(t.Context(), strconv.Itoa(previewChat))
	if err != nil {
		t.Fatalf("StartPreview: %v", err)
	}
	return p
}

func finish(t *testing.T, f *fixture, p channels.Preview, text string) channels.SendResult {
	t.Helper()
	res, err := f.ch.FinishPreview(t.Context(), strconv.Itoa(previewChat), p.ID(), text)
	if err != nil {
		t.Fatalf("FinishPreview: %v", err)
	}
	return res
}

func TestPreviewDraftsStreamOneMessage(t *testing.T) {
	f := newFixture(t, nil)
	text := answer(wordsPerAnswer)
	p := startPreview(t, f)
	f.sleeps.advance(firstToken)
	if err := p.Update(t.Context(), "**Short answer:** word0 **wo"); err != nil {
		t.Fatal(err)
	}
	if d := f.srv.Drafts(previewChat); len(d) != 1 || d[0].Text != "Short answer: word0" {
		t.Fatalf("the first words are not shown at once: drafts %+v", d)
	}
	stream(t, f, p, text)
	if p.ID() != "" {
		t.Errorf("a draft preview has id %q, want none", p.ID())
	}
	res := finish(t, f, p, text)

	drafts := f.srv.Drafts(previewChat)
	// 3.8 s of writing at one update a second: the first words, then one
	// a second, then the final message.
	if len(drafts) < 3 || len(drafts) > 5 {
		t.Errorf("%d drafts for a 3.8 s reply, want one a second", len(drafts))
	}
	for _, d := range drafts {
		if d.DraftID == 0 || d.DraftID != drafts[0].DraftID {
			t.Errorf("draft ids %d and %d: one reply is one draft", d.DraftID, drafts[0].DraftID)
		}
	}
	if n := len(f.srv.Calls("editMessageText")); n != 0 {
		t.Errorf("%d edits in draft mode", n)
	}
	if f.srv.DraftShowing(previewChat) {
		t.Error("the draft is still showing after the final message")
	}
	assertFinal(t, f, res, text)
}

// assertFinal checks the chat shows text once, formatted as SendText
// formats it, within the Bot API call budget of a streamed reply.
func assertFinal(t *testing.T, f *fixture, res channels.SendResult, text string) {
	t.Helper()
	got := visibleTexts(f.srv, previewChat)
	want := sendTextShows(t, f, text)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("the chat shows %q, SendText shows %q", got, want)
	}
	if res.Chunks != len(want) || len(res.PlatformIDs) != len(want) {
		t.Errorf("result %+v for %d visible messages", res, len(want))
	}
	for i, v := range f.srv.VisibleMessages(previewChat) {
		if i < len(res.PlatformIDs) && res.PlatformIDs[i] != strconv.FormatInt(v.ID, 10) {
			t.Errorf("platform id %d is %s, the chat shows message %d", i, res.PlatformIDs[i], v.ID)
		}
	}
	n := replyCalls(f.srv, previewChat)
	if n > 6 {
		t.Errorf("%d Bot API calls for one streamed reply, want at most 6", n)
	}
	t.Logf("3.8 s streamed reply: %d Bot API calls (%d drafts, %d edits), %d visible message(s)",
		n, len(f.srv.Drafts(previewChat)), len(f.srv.Calls("editMessageText")), len(got))
}

func TestPreviewEditsOneMessageWithoutDrafts(t *testing.T) {
	for _, mode := range []telegramtest.DraftSupport{telegramtest.DraftsUnknown, telegramtest.DraftsRefused} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.SetDrafts(mode)
			text := answer(wordsPerAnswer)
			p := startPreview(t, f)
			stream(t, f, p, text)
			if p.ID() == "" {
				t.Fatal("an edited preview has no message id")
			}
			res := finish(t, f, p, text)
			vis := f.srv.VisibleMessages(previewChat)
			if len(vis) != 1 {
				t.Fatalf("%d visible messages, want one", len(vis))
			}
			if e := vis[0].Edits(); e < 2 || e > 4 {
				t.Errorf("%d edits for a 3.8 s reply, want about one a second: %q", e, vis[0].History)
			}
			for i := 1; i < len(vis[0].History); i++ {
				if !strings.HasPrefix(vis[0].History[i], strings.TrimSpace(vis[0].History[i-1])) {
					t.Errorf("version %d does not grow version %d: %q", i, i-1, vis[0].History[i-1:i+1])
				}
			}
			assertFinal(t, f, res, text)

			// The process remembers: the next reply does not ask again.
			p = startPreview(t, f)
			if err := p.Update(t.Context(), "next reply"); err != nil {
				t.Fatal(err)
			}
			if n := len(f.srv.Calls("sendMessageDraft")); n != 1 {
				t.Errorf("%d draft calls over two replies, want the one refused", n)
			}
		})
	}
}

func TestPreviewCoalescesAndFlushesTheLatestText(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	for _, s := range []string{"one", "one two", "one two three"} {
		if err := p.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		f.sleeps.advance(10 * time.Millisecond)
	}
	if h := f.srv.VisibleMessages(previewChat)[0].History; len(h) != 1 || h[0] != "one" {
		t.Fatalf("history %q: updates within a second must wait", h)
	}
	f.sleeps.advance(time.Second)
	if h := f.srv.VisibleMessages(previewChat)[0].History; len(h) != 2 || h[1] != "one two three" {
		t.Fatalf("history %q: the latest text is shown a second later without a new update", h)
	}
	if f.sleeps.pending() != 0 {
		t.Errorf("%d timers left after the flush", f.sleeps.pending())
	}
}

func TestPreviewWaitsOutFloodControlAndNotModified(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	update := func(s string) {
		t.Helper()
		if err := p.Update(t.Context(), s); err != nil {
			t.Fatalf("Update(%q): %v", s, err)
		}
	}
	update("a")
	f.sleeps.advance(time.Second)
	f.srv.FailNext("editMessageText", 1, 429, 5)
	update("a b")
	for range 4 {
		f.sleeps.advance(time.Second)
		update("a b c")
	}
	if n := len(f.srv.Calls("editMessageText")); n != 1 {
		t.Fatalf("%d edits during retry_after 5, want only the refused one", n)
	}
	f.sleeps.advance(1100 * time.Millisecond)
	if h := f.srv.VisibleMessages(previewChat)[0].History; len(h) != 2 || h[1] != "a b c" {
		t.Fatalf("history %q after retry_after", h)
	}
	f.sleeps.advance(time.Second)
	f.srv.FailNextWith("editMessageText", 1, 400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same")
	update("a b c d")
	f.sleeps.advance(time.Second)
	update("a b c d e")
	if h := f.srv.VisibleMessages(previewChat)[0].History; h[len(h)-1] != "a b c d e" {
		t.Fatalf("the preview stopped after \"message is not modified\": %q", h)
	}
	f.srv.FailNextWith("editMessageText", 1, 400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same")
	res := finish(t, f, p, "a b c d e f")
	if len(res.PlatformIDs) != 1 || res.PlatformIDs[0] != p.ID() {
		t.Errorf("a final edit answered \"not modified\" gave %+v", res)
	}
}

func TestPreviewMessageGone(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	first := p.ID()
	f.srv.DeleteMessage(previewChat, mustAtoi(t, first))
	f.sleeps.advance(time.Second)
	if err := p.Update(t.Context(), "first words"); err != nil {
		t.Fatalf("Update after the preview was deleted: %v", err)
	}
	if p.ID() == first || visibleTexts(f.srv, previewChat)[0] != "first words" {
		t.Fatalf("the preview did not go on in a new message: id %s, chat %q", p.ID(), visibleTexts(f.srv, previewChat))
	}
	f.srv.DeleteMessage(previewChat, mustAtoi(t, p.ID()))
	res := finish(t, f, p, "first words, final")
	vis := f.srv.VisibleMessages(previewChat)
	if len(vis) != 1 || vis[0].Text != "first words, final" || res.PlatformIDs[0] != strconv.FormatInt(vis[0].ID, 10) {
		t.Fatalf("final reply after the preview was deleted: %+v, result %+v", vis, res)
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

func TestPreviewLongReplyShowsOneMessageUntilFinal(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	text := answer(1500) // about three messages' worth
	p := startPreview(t, f)
	words := strings.SplitAfter(text, " ")
	for i := range words {
		if err := p.Update(t.Context(), strings.Join(words[:i+1], "")); err != nil {
			t.Fatal(err)
		}
		f.sleeps.advance(5 * time.Millisecond)
		if n := len(f.srv.VisibleMessages(previewChat)); n > 1 {
			t.Fatalf("%d visible messages while writing word %d", n, i)
		}
	}
	res := finish(t, f, p, text)
	if res.Chunks < 3 {
		t.Fatalf("%d chunks for %d bytes", res.Chunks, len(text))
	}
	assertFinalText(t, f, res, text)
}

// assertFinalText is assertFinal without the call budget, for replies
// longer than one message.
func assertFinalText(t *testing.T, f *fixture, res channels.SendResult, text string) {
	t.Helper()
	got, want := visibleTexts(f.srv, previewChat), sendTextShows(t, f, text)
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || res.Chunks != len(want) {
		t.Errorf("the chat shows %d messages, SendText %d; result %+v", len(got), len(want), res)
	}
}

func TestPreviewFinalFallsBackToPlainText(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "**bold** start"); err != nil {
		t.Fatal(err)
	}
	f.srv.FailNextWith("editMessageText", 1, 400, `Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`)
	res := finish(t, f, p, "**bold** start and end")
	vis := f.srv.VisibleMessages(previewChat)
	if !res.PlainText || len(vis) != 1 || vis[0].Text != "bold start and end" || vis[0].ParseMode != "" {
		t.Fatalf("result %+v, chat %+v", res, vis)
	}
}

func TestPreviewFinishWithoutIDUsesTheLivePreview(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "partial"); err != nil {
		t.Fatal(err)
	}
	// The caller read ID() before the first message went out.
	res, err := f.ch.FinishPreview(t.Context(), strconv.Itoa(previewChat), "", "partial and final")
	if err != nil {
		t.Fatal(err)
	}
	if vis := visibleTexts(f.srv, previewChat); len(vis) != 1 || vis[0] != "partial and final" || res.PlatformIDs[0] != p.ID() {
		t.Fatalf("chat %q, result %+v", vis, res)
	}
}

func TestPreviewAfterRestartFinishesTheStoredPreview(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "written before the crash"); err != nil {
		t.Fatal(err)
	}
	id := p.ID()
	restarted := newFixtureOn(t, f.srv)
	res, err := restarted.ch.FinishPreview(t.Context(), strconv.Itoa(previewChat), id, "written before the crash, and after")
	if err != nil {
		t.Fatal(err)
	}
	if vis := visibleTexts(f.srv, previewChat); len(vis) != 1 || vis[0] != "written before the crash, and after" || res.PlatformIDs[0] != id {
		t.Fatalf("chat %q, result %+v", vis, res)
	}
}

func TestPreviewNotInGroups(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.ch.StartPreview(t.Context(), "-100123"); !errors.Is(err, channels.ErrNoPreview) {
		t.Fatalf("StartPreview in a group: %v, want ErrNoPreview", err)
	}
}

func TestPreviewLeavesTheFinalReplyItsSlot(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	for i := range 40 {
		if err := p.Update(context.Background(), strings.Repeat("word ", i+1)); err != nil {
			t.Fatal(err)
		}
		f.sleeps.advance(100 * time.Millisecond)
	}
	before := len(f.sleeps.positive())
	finish(t, f, p, "the end")
	if waited := f.sleeps.positive()[before:]; len(waited) != 0 {
		t.Errorf("the final reply waited %v for the pacer after the preview", waited)
	}
}

// The default timer shows the latest text without a further update.
func TestPreviewRealTimerFlushes(t *testing.T) {
	f := newFixture(t, nil)
	ch, err := New(Config{Token: testToken, APIURL: f.srv.URL}, slog.New(slog.DiscardHandler), WithSleep(f.sleeps.sleep))
	if err != nil {
		t.Fatal(err)
	}
	f.ch = ch
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	for _, s := range []string{"one", "one two"} {
		if err := p.Update(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// A failed draft, the first message, then the edit from the timer.
	if _, err := f.srv.WaitSent(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if h := f.srv.VisibleMessages(previewChat)[0].History; len(h) != 2 || h[1] != "one two" {
		t.Fatalf("history %q", h)
	}
}

func TestPreviewFinalWaitsOutFloodControl(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetDrafts(telegramtest.DraftsUnknown)
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "so far"); err != nil {
		t.Fatal(err)
	}
	f.srv.FailNext("editMessageText", 1, 429, 2)
	res := finish(t, f, p, "so far, and done")
	if vis := visibleTexts(f.srv, previewChat); len(vis) != 1 || vis[0] != "so far, and done" || res.PlatformIDs[0] != p.ID() {
		t.Fatalf("chat %q, result %+v", vis, res)
	}
	if waited := f.sleeps.positive(); len(waited) == 0 || waited[len(waited)-1] != 2*time.Second {
		t.Errorf("waits %v, want retry_after 2 s before the final edit", waited)
	}
}

func TestPreviewBlockedEndsThePreview(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailNextWith("sendMessageDraft", 1, 403, "Forbidden: bot was blocked by the user")
	p := startPreview(t, f)
	if err := p.Update(t.Context(), "hello"); !errors.Is(err, channels.ErrBlocked) {
		t.Fatalf("Update to a chat that blocked the bot: %v, want ErrBlocked", err)
	}
	f.sleeps.advance(2 * time.Second)
	if err := p.Update(t.Context(), "hello again"); err != nil {
		t.Fatalf("Update after the preview ended: %v", err)
	}
	if n := len(f.srv.Calls("sendMessageDraft")); n != 1 {
		t.Errorf("%d draft calls after the chat blocked the bot, want the refused one", n)
	}
}

// The cost of rendering what a preview shows, paid at most once per
// interval: go test ./channels/telegram -bench PreviewHTML
func BenchmarkPreviewHTML(b *testing.B) {
	for _, words := range []int{120, 600, 3000} {
		md := answer(words)
		b.Run(fmt.Sprintf("%dB", len(md)), func(b *testing.B) {
			for b.Loop() {
				tgpreview.Chunk(md)
			}
		})
	}
}
