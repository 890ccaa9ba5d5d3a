package pipeline_test

import (
	"context"
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// The driver records a turn's events with the channel and sender and
// without a correlation id: the stream names the turn.
func TestDriverRecordsTurnEventsWithoutCorrelationID(t *testing.T) {
	f := newFixture(t)
	id := f.turn(t, message("hola"))
	evs, err := f.store.Load(context.Background(), domain.TurnStream(id), 2) // after MessageReceived
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 3 {
		t.Fatalf("%d events after the message", len(evs))
	}
	for _, e := range evs {
		md := e.Metadata
		if md.CorrelationID != "" || md.Channel != chanName || md.Sender != senderID || e.Correlation() != id {
			t.Errorf("%s recorded with %+v (correlation %q), want channel and sender, turn %s by its stream", e.Type, md, e.Correlation(), id)
		}
	}
}
