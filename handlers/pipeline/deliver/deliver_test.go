package deliver

import (
	"context"
	"errors"
	"testing"

	"github.com/omega-gateway/omega/channels"
)

type refusing struct {
	channels.Channel
	calls int
}

func (r *refusing) SendText(context.Context, string, string) (channels.SendResult, error) {
	r.calls++
	return channels.SendResult{}, channels.ErrBlocked
}

type set map[string]channels.Channel

func (s set) Channel(name string) (channels.Channel, bool) { ch, ok := s[name]; return ch, ok }

// A refusal is final at once: a blocked recipient is not asked again.
func TestTextDoesNotRetryARefusal(t *testing.T) {
	ch := &refusing{}
	_, err := Chat{Channels: set{"x": ch}, Channel: "x", ID: "c"}.Text(context.Background(), "hi")
	if !errors.Is(err, channels.ErrBlocked) || ch.calls != 1 {
		t.Fatalf("Text = %v after %d calls, want the refusal after one", err, ch.calls)
	}
}

func TestUnknownChannel(t *testing.T) {
	_, err := Chat{Channels: set{}, Channel: "nowhere"}.Text(context.Background(), "hi")
	if !errors.Is(err, channels.ErrNoChannel) {
		t.Fatalf("Text to an unknown channel = %v", err)
	}
	if _, err := (Chat{Channels: set{}, Channel: "nowhere"}).Courtesy(context.Background(), "hi"); !errors.Is(err, channels.ErrNoChannel) {
		t.Fatalf("Courtesy to an unknown channel = %v", err)
	}
}
