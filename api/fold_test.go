package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
)

// The answer to a turn is folded from the events it is made of; the
// others (the context first) are not decoded, and the answer is the one
// a fold of every event gives.
func TestFoldReadsOnlyTheAnswer(t *testing.T) {
	reg := events.NewRegistry()
	s := &Server{Registry: reg}
	payloads := []domain.Payload{
		turn.MessageReceived{Text: "hi"},
		turn.AckSent{Text: "on it"},
		turn.ContextBuilt{Message: "hi"},
		turn.ProviderReplied{Text: "hello"},
		turn.ReplyReady{Text: "hello there"},
		turn.ReplySent{Kind: "reply", Chunks: 1}, // its text is the ready one
		turn.TurnCompleted{Status: "ok"},
	}
	var evs []domain.Event
	var whole turn.Turn
	for i, p := range payloads {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		e := domain.Event{StreamID: "turn-t1", Version: int64(i + 1), Type: p.EventType(), Data: data, RecordedAt: time.Now()}
		whole.Apply(p, e.Version, e.RecordedAt)
		evs = append(evs, e)
	}
	evs[2].Data = []byte(`{"not":`) // a context fold must not touch

	out, done, err := s.fold("t1", evs)
	if err != nil || !done {
		t.Fatalf("fold = %+v, %v, %v", out, done, err)
	}
	want := TurnOut{TurnID: "t1", Status: whole.Completed.Status, Acknowledged: whole.Acked, Reply: whole.Sent.Text}
	if out != want || out.Reply != "hello there" || !out.Acknowledged {
		t.Fatalf("fold = %+v, want %+v", out, want)
	}
}
