package build

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/channels"
)

// Channels finds a channel by name.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// ChannelNotifier sends build messages through the process's channels.
type ChannelNotifier struct {
	Channels Channels
}

// Notify sends text to a chat.
func (n ChannelNotifier) Notify(ctx context.Context, channel, chatID, text string) error {
	ch, ok := n.Channels.Channel(channel)
	if !ok {
		return fmt.Errorf("channel %s is not running in this process", channel)
	}
	_, err := ch.SendText(ctx, chatID, text)
	return err
}

// Models maps a model tier to a model: "fast" to fast, anything else to
// complex (fast when complex is not set).
func Models(fast, complex string) func(tier string) string {
	return func(tier string) string {
		if tier == "fast" || complex == "" {
			return fast
		}
		return complex
	}
}
