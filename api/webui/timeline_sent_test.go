package webui

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
)

// A reply sent as it was ready, recorded without its text, shows the text
// that was sent.
func TestTimelineShowsTheSentTextLeftToReplyReady(t *testing.T) {
	reg := events.NewRegistry()
	var evs []domain.Event
	for _, p := range []domain.Payload{
		turn.MessageReceived{Channel: "terminal", SenderID: "ana", Text: "hi"},
		turn.ReplyReady{Text: "hello there"},
		turn.ReplySent{Kind: "reply", Chunks: 1},
	} {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, domain.Event{StreamID: "turn-a", Type: p.EventType(), Data: data})
	}
	entries := (&Server{decoder: reg}).timeline(context.Background(), evs)
	sent := entries[2]
	if len(sent.Texts) != 1 || sent.Texts[0].Label != "sent" || sent.Texts[0].Text != "hello there" {
		t.Fatalf("ReplySent entry %+v", sent)
	}
}

func TestStreamSummary(t *testing.T) {
	got := streamSummary(turn.ReplyStreamStarted{VisibleMs: 812, PreviewID: "4711"})
	if got != "reply began to show 812ms after the message in preview message 4711" {
		t.Errorf("summary %q", got)
	}
}
