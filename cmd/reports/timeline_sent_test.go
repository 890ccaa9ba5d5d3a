package reports

import (
	"encoding/json"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// --json shows the text a reply sent as it was ready, which its event
// leaves to ReplyReady; other events print as recorded.
func TestTimelineJSONShowsTheSentText(t *testing.T) {
	var sent turn.SentTexts
	var out []string
	for _, p := range []domain.Payload{turn.ReplyReady{Text: "hello"}, turn.ReplySent{Kind: "reply", Chunks: 1}} {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		_, e, err := withSentText(&sent, p, domain.Event{Type: p.EventType(), Data: data})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(e.Data))
	}
	if out[0] != `{"text":"hello"}` || out[1] != `{"kind":"reply","text":"hello","chunks":1}` {
		t.Fatalf("printed %q", out)
	}
}
