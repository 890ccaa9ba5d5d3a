package telegram

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/tgtext"
)

func TestSendTextLongReplyInOrderedChunks(t *testing.T) {
	f := newFixture(t, nil)
	var md strings.Builder
	for i := 0; md.Len() < 10_000; i++ {
		md.WriteString("Line with *emphasis*, `code` & <html> 🚀.\n")
		if i%25 == 0 {
			md.WriteString("```python\nprint('a' < 'b')\n```\n")
		}
	}
	md.WriteString("THE END")
	res, err := f.ch.SendText(context.Background(), "77", md.String())
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	sent := f.srv.Messages(77)
	if res.Chunks < 3 || len(sent) != res.Chunks || len(res.PlatformIDs) != res.Chunks || res.PlainText {
		t.Fatalf("result %+v, %d messages sent", res, len(sent))
	}
	// Messages holds only what the double's Bot API HTML parser accepted,
	// so every chunk sent as HTML is well-formed.
	for i, c := range sent {
		if c.ParseMode != "HTML" || tgtext.UTF16Len(c.Text) > tgtext.MaxMessageLen {
			t.Errorf("chunk %d: parse mode %q, %d units", i, c.ParseMode, tgtext.UTF16Len(c.Text))
		}
	}
	if !strings.HasPrefix(sent[0].Text, "Line with <i>emphasis</i>") || !strings.HasSuffix(sent[len(sent)-1].Text, "THE END") {
		t.Error("chunks are out of order")
	}
}

func TestSendTextFallsBackToPlainText(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailNextWith("sendMessage", 1, 400, `Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`)
	res, err := f.ch.SendText(context.Background(), "77", "**bold** and [link](https://go.dev)")
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	if !res.PlainText || res.Chunks != 1 {
		t.Errorf("result = %+v, want plain text", res)
	}
	sent := f.srv.Sent()
	if len(sent) != 2 || sent[0].Accepted() || !sent[1].Accepted() {
		t.Fatalf("calls = %+v", sent)
	}
	if sent[1].ParseMode != "" || sent[1].Text != "bold and link (https://go.dev)" {
		t.Errorf("plain text sent as %q (mode %q)", sent[1].Text, sent[1].ParseMode)
	}
}

// The double itself rejects malformed HTML; the fallback works against it.
func TestSendChunkMalformedHTMLRejectedByServer(t *testing.T) {
	f := newFixture(t, nil)
	_, plain, err := f.ch.sendChunk(context.Background(), 77, "77", "<b>unclosed &amp; <blink>")
	if err != nil || !plain {
		t.Fatalf("plain = %v, err = %v", plain, err)
	}
	if m := f.srv.Messages(77); len(m) != 1 || m[0].Text != "unclosed & " {
		t.Errorf("messages = %+v", m)
	}
}

func TestSendTextWaitsOutFloodControl(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailNext("sendMessage", 2, 429, 7)
	res, err := f.ch.SendText(context.Background(), "77", "hello")
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	if res.Chunks != 1 || len(f.srv.Messages(77)) != 1 {
		t.Errorf("result %+v", res)
	}
	if got := f.sleeps.positive(); len(got) != 2 || got[0] != 7*time.Second || got[1] != 7*time.Second {
		t.Errorf("waits = %v, want 7s twice", got)
	}
}

func TestSendTextFloodControlIsBounded(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailNext("sendMessage", maxSendAttempts+5, 429, 1)
	_, err := f.ch.SendText(context.Background(), "77", "hello")
	if err == nil {
		t.Fatal("want an error")
	}
	if n := len(f.srv.Sent()); n != maxSendAttempts {
		t.Errorf("%d attempts, want %d", n, maxSendAttempts)
	}
}

func TestSendErrorsAreClassified(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{403, channels.ErrBlocked},
		{400, channels.ErrRejected},
	}
	for _, tt := range tests {
		f := newFixture(t, nil)
		f.srv.FailNext("sendMessage", 1, tt.status, 0)
		_, err := f.ch.SendText(context.Background(), "77", "hello")
		if !errors.Is(err, tt.want) {
			t.Errorf("status %d: err = %v, want %v", tt.status, err, tt.want)
		}
		if n := len(f.srv.Sent()); n != 1 {
			t.Errorf("status %d: %d calls, want no retry", tt.status, n)
		}
		if strings.Contains(err.Error(), testToken) {
			t.Error("error leaks the token")
		}
	}
}

func TestSendTypingAndPhoto(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := f.ch.SendTyping(ctx, "77"); err != nil {
		t.Fatalf("SendTyping: %v", err)
	}
	photo := channels.Attachment{Name: "chart.png", MIME: "image/png", Data: []byte("\x89PNG...")}
	if err := f.ch.SendPhoto(ctx, "77", photo, "the **chart**"); err != nil {
		t.Fatalf("SendPhoto: %v", err)
	}
	sent := f.srv.Sent()
	if len(sent) != 2 || sent[0].Method != "sendChatAction" || sent[0].Action != "typing" {
		t.Fatalf("calls = %+v", sent)
	}
	if p := sent[1]; p.Method != "sendPhoto" || string(p.Photo) != "\x89PNG..." || p.Text != "the <b>chart</b>" || p.ParseMode != "HTML" {
		t.Errorf("photo call = %+v", p)
	}
	f.sleeps.advance(2 * time.Second) // the chat has slots again
	f.srv.FailNext("sendChatAction", 1, 403, 0)
	if err := f.ch.SendTyping(ctx, "77"); !errors.Is(err, channels.ErrBlocked) {
		t.Errorf("typing to blocked chat: %v", err)
	}
}

func TestPacingDoesNotDelaySingleReply(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for range 5 {
		if err := f.ch.SendTyping(ctx, "77"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.ch.SendText(ctx, "77", "hi"); err != nil {
		t.Fatal(err)
	}
	if w := f.sleeps.positive(); len(w) != 0 {
		t.Errorf("single reply waited %v", w)
	}
}

// An acknowledgement over the Bot API goes out at once in a quiet chat and
// is skipped, with no request, in a chat whose budget the reply needs.
func TestSendCourtesyNeverDelaysTheReply(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if sent, err := f.ch.SendCourtesy(ctx, "77", "Got it"); err != nil || !sent {
		t.Fatalf("quiet chat: sent %v, %v", sent, err)
	}
	if _, err := f.ch.SendText(ctx, "77", "first"); err != nil {
		t.Fatal(err)
	}
	if sent, err := f.ch.SendCourtesy(ctx, "77", "Got it again"); err != nil || sent {
		t.Fatalf("busy chat: sent %v, %v", sent, err)
	}
	if _, err := f.ch.SendText(ctx, "77", "second"); err != nil {
		t.Fatal(err)
	}
	if w := f.sleeps.positive(); len(w) != 0 {
		t.Errorf("a reply waited %v behind an acknowledgement", w)
	}
	var texts []string
	for _, c := range f.srv.Messages(77) {
		texts = append(texts, c.Text)
	}
	if want := []string{"Got it", "first", "second"}; !slices.Equal(texts, want) {
		t.Fatalf("messages %q, want %q", texts, want)
	}
}

// Over the Bot API double: typing, an acknowledgement and the reply it
// announces, within a second of each other, all go out without a pacing
// wait; a burst of 10 to one chat then leaves at one per second.
func TestPacingOverBotAPI(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if err := f.ch.SendTyping(ctx, "77"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ch.SendText(ctx, "77", "Got it, I'll get to this next."); err != nil {
		t.Fatal(err)
	}
	f.sleeps.advance(400 * time.Millisecond)
	if err := f.ch.SendTyping(ctx, "77"); err != nil { // no slot left: skipped
		t.Fatal(err)
	}
	if _, err := f.ch.SendText(ctx, "77", "the reply"); err != nil {
		t.Fatal(err)
	}
	if w := f.sleeps.positive(); len(w) != 0 {
		t.Errorf("ack and reply waited %v", w)
	}
	var methods []string
	for _, c := range f.srv.Sent() {
		methods = append(methods, c.Method+":"+c.Text)
	}
	want := "[sendChatAction: sendMessage:Got it, I'll get to this next. sendMessage:the reply]"
	if got := fmt.Sprint(methods); got != want {
		t.Errorf("sent %s, want %s", got, want)
	}

	f.sleeps.advance(2 * time.Second) // quiet again
	start := f.sleeps.clock()
	for i := range 10 {
		if _, err := f.ch.SendText(ctx, "88", fmt.Sprintf("burst %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if m := f.srv.Messages(88); len(m) != 10 || m[9].Text != "burst 9" {
		t.Fatalf("burst delivered %d messages: %+v", len(m), m)
	}
	// Three leave at once, the other seven one second apart.
	if took := f.sleeps.clock().Sub(start); took != 7*time.Second {
		t.Errorf("burst of 10 took %v of pacing, want 7s", took)
	}
}
