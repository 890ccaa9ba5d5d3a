package slack

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/slack/slacktest"
)

// A preview lives in the thread it answers, shows no half-open markup,
// and is replaced by the final reply; if its message is gone by then the
// reply is posted anew.
func TestPreviewInThreadAndGone(t *testing.T) {
	s := slacktest.New(t)
	ch := newChannel(t, testConfig(s))
	chat := "CTEAM/1700000000.000001"
	p, err := ch.StartPreview(t.Context(), chat)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Update(t.Context(), "Here is **half"); err != nil {
		t.Fatal(err)
	}
	shown := s.Messages("CTEAM")
	if len(shown) != 1 || shown[0].ThreadTS != "1700000000.000001" || shown[0].Text != "Here is" || p.ID() != "CTEAM:"+shown[0].TS {
		t.Fatalf("preview shows %+v (id %s)", shown, p.ID())
	}
	res, err := ch.FinishPreview(t.Context(), chat, p.ID(), "Here is **all** of it")
	if err != nil {
		t.Fatal(err)
	}
	final := s.Messages("CTEAM")
	if len(final) != 1 || final[0].Text != "Here is *all* of it" || final[0].Edits != 1 || res.PlatformIDs[0] != p.ID() {
		t.Fatalf("finished as %+v, result %+v", final, res)
	}

	p, _ = ch.StartPreview(t.Context(), chat)
	_ = p.Update(t.Context(), "second")
	s.RefuseNext("chat.update", "message_not_found")
	res, err = ch.FinishPreview(t.Context(), chat, p.ID(), "second reply")
	if err != nil {
		t.Fatal(err)
	}
	all := s.Messages("CTEAM")
	if last := all[len(all)-1]; len(all) != 3 || !strings.Contains(last.Text, "second reply") || res.PlatformIDs[0] != "CTEAM:"+last.TS {
		t.Fatalf("after the preview was gone: %+v, result %+v", all, res)
	}
}
