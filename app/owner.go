package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/channels"
)

// owner delivers omega's own notices (bug reports, limitations) where the
// heartbeat's alerts go: OMEGA_HEARTBEAT_TARGET, else the first
// allowlisted Telegram user, else the first allowed WhatsApp number
// (config.HeartbeatDestination).
type owner struct{ rt *Runtime }

func (o owner) Alert(ctx context.Context, text string) (string, string, error) {
	ch, chat, err := o.rt.Config.HeartbeatDestination()
	if err != nil {
		return "", "", err
	}
	if ch == "" {
		return "", "", errors.New("no owner to alert: set OMEGA_HEARTBEAT_TARGET or allow a Telegram user")
	}
	c, ok := o.rt.Channel(ch)
	if !ok {
		return ch, chat, fmt.Errorf("%w: %s", channels.ErrNoChannel, ch)
	}
	if _, err := c.SendText(ctx, chat, text); err != nil {
		return ch, chat, fmt.Errorf("alert the owner on %s: %w", ch, err)
	}
	return ch, chat, nil
}
