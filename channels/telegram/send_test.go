package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
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
	for i, c := range sent {
		if c.ParseMode != "HTML" || utf16Len(c.Text) > MaxMessageLen {
			t.Errorf("chunk %d: parse mode %q, %d units", i, c.ParseMode, utf16Len(c.Text))
		}
		balanced(t, c.Text)
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

func TestPacerReservations(t *testing.T) {
	p := newPacer()
	now := time.Now()
	for i := range chatBurst {
		if d := p.reserve("a", now); d != 0 {
			t.Fatalf("message %d of a burst delayed %v", i+1, d)
		}
	}
	if d := p.reserve("a", now); d <= 0 || d > time.Second {
		t.Errorf("message beyond the chat burst delayed %v, want (0, 1s]", d)
	}
	if d := p.reserve("b", now); d != 0 {
		t.Errorf("another chat delayed %v", d)
	}
	// 5 global tokens are taken; take the rest from distinct chats.
	for i := range globalBurst - 5 {
		p.reserve(strconv.Itoa(i), now)
	}
	if d := p.reserve("c", now); d <= 0 {
		t.Errorf("global burst exhausted but no delay")
	}
}
