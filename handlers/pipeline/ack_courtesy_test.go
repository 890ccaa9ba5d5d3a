package pipeline_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// pacedChannel is a channel that paces its sends and has no slot to
// spare: every courtesy message is declined.
type pacedChannel struct {
	*fakeChannel
	offered int
}

func (c *pacedChannel) SendCourtesy(context.Context, string, string) (bool, error) {
	c.offered++
	return false, nil
}

func (c *pacedChannel) Channel(name string) (channels.Channel, bool) { return c, name == chanName }

// A busy acknowledgement the channel cannot send at once is skipped, not
// queued in front of the reply it announces, and recorded as skipped so
// that it is not tried again.
func TestAckSkippedWhenTheChannelHasNoSlot(t *testing.T) {
	f := newFixture(t)
	paced := &pacedChannel{fakeChannel: f.channel}
	f.driver.Channels = paced
	id := uuid.NewString()
	f.appendTo(t, domain.TurnStream(id), 0, message("are you there?"))
	for range 2 {
		if err := f.driver.Ack(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	acks := ofType[turn.AckSent](f.events(t, domain.TurnStream(id)))
	if len(acks) != 1 || !acks[0].Skipped || paced.offered != 1 {
		t.Fatalf("acks %+v after %d offers", acks, paced.offered)
	}
	if sent := f.channel.texts(); len(sent) != 0 {
		t.Fatalf("the acknowledgement went out as a message: %q", sent)
	}
}
