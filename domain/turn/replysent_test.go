package turn

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// A reply sent as it was ready is recorded without its text and reads
// back whole; any other reply keeps its text.
func TestReplySentLeavesTheReadyTextOut(t *testing.T) {
	ready := &ReplyReady{Text: "hola"}
	cases := []struct {
		name     string
		sent     ReplySent
		ready    *ReplyReady
		recorded string // the text recorded
		read     string // the text the fold reads
	}{
		{"the ready text", ReplySent{Kind: "reply", Text: "hola", Chunks: 1}, ready, "", "hola"},
		{"another text (an error message)", ReplySent{Kind: "error", Text: "sorry", Chunks: 1}, ready, "sorry", "sorry"},
		{"no reply ready (a command)", ReplySent{Kind: "command", Text: "hola", Chunks: 1}, nil, "hola", "hola"},
		{"nothing sent (only markers)", ReplySent{Kind: "reply"}, &ReplyReady{Text: " "}, "", ""},
		{"no chunk reported", ReplySent{Kind: "reply", Text: "hola"}, ready, "hola", "hola"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := c.sent.WithoutReadyText(c.ready)
			if rec.Text != c.recorded {
				t.Fatalf("recorded text %q, want %q", rec.Text, c.recorded)
			}
			events := []domain.Payload{MessageReceived{Channel: "http", SenderID: "1", Text: "hi"}, AccessGranted{}}
			if c.ready != nil {
				events = append(events, *c.ready)
			}
			if got := fold(append(events, rec)...).Sent.Text; got != c.read {
				t.Fatalf("the fold reads %q, want %q", got, c.read)
			}
		})
	}
	// Recorded before the text was left out: read as recorded.
	if got := fold(MessageReceived{}, ReplyReady{Text: "hola"}, ReplySent{Kind: "reply", Text: "hola", Chunks: 1}).Sent.Text; got != "hola" {
		t.Fatalf("an older ReplySent reads %q", got)
	}
}

// A reader going through a turn's events one at a time reads the sent
// text whole.
func TestSentTextsFill(t *testing.T) {
	var s SentTexts
	var got []string
	for _, p := range []domain.Payload{ReplyReady{Text: "hola"}, ReplySent{Kind: "reply", Chunks: 1}, ReplySent{Kind: "error", Text: "sorry", Chunks: 1}, ReplySent{Kind: "reply"}} {
		if e, ok := s.Fill(p).(ReplySent); ok {
			got = append(got, e.Text)
		}
	}
	if len(got) != 3 || got[0] != "hola" || got[1] != "sorry" || got[2] != "" {
		t.Fatalf("sent texts %q", got)
	}
}
