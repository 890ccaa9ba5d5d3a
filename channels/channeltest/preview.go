package channeltest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// testPreview streams a reply as a model writes it (the first token after
// 800 ms, then a word every 25 ms) into a channels.Previewer: the chat
// shows at most one message for it while it is written, and in the end
// exactly what SendText shows for the same reply.
func testPreview(t *testing.T, h Harness) {
	pv, ok := h.Channel.(channels.Previewer)
	if !ok || h.Visible == nil {
		t.Skip("the channel shows no reply while it is written, or the suite cannot see the chat")
	}
	advance := h.Advance
	if advance == nil {
		advance = time.Sleep
	}
	text := streamedReply()
	if _, err := h.Channel.SendText(t.Context(), h.ChatID, text); err != nil {
		t.Fatalf("SendText: %v", err)
	}
	want := h.Visible(t)
	before := len(want)

	p, err := pv.StartPreview(t.Context(), h.ChatID)
	if errors.Is(err, channels.ErrNoPreview) {
		t.Skip("no preview in this chat")
	}
	if err != nil {
		t.Fatalf("StartPreview: %v", err)
	}
	advance(800 * time.Millisecond)
	words := strings.SplitAfter(text, " ")
	for i := range words {
		if err := p.Update(t.Context(), strings.Join(words[:i+1], "")); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		advance(25 * time.Millisecond)
		if n := len(h.Visible(t)) - before; n > 1 {
			t.Fatalf("%d messages visible while writing word %d, want at most one", n, i)
		}
	}
	res, err := pv.FinishPreview(t.Context(), h.ChatID, p.ID(), text)
	if err != nil {
		t.Fatalf("FinishPreview: %v", err)
	}
	got := h.Visible(t)[before:]
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("the finished preview shows %q, SendText showed %q", got, want)
	}
	if res.Chunks != len(got) || len(res.PlatformIDs) != len(got) {
		t.Errorf("FinishPreview reported %+v for %d visible messages", res, len(got))
	}
}

// streamedReply is 60 words of Markdown in three paragraphs.
func streamedReply() string {
	var b strings.Builder
	b.WriteString("**Streamed** reply with `code`:")
	for i := range 60 {
		fmt.Fprintf(&b, " word%d", i)
		if i%20 == 19 {
			b.WriteString("\n\n")
		}
	}
	return strings.TrimSpace(b.String())
}
