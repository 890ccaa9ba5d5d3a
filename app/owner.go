package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/handlers/apply"
)

// owner delivers omega's own notices (bug reports, limitations) where the
// heartbeat's alerts go: OMEGA_HEARTBEAT_TARGET, else the first
// allowlisted Telegram user, else the first allowed WhatsApp number
// (config.HeartbeatDestination, as the decision inputs recorded it).
type owner struct{ rt *Runtime }

// owner is the owner alerts go to: a re-run's answers with the recorded
// outcomes.
func (r *Runtime) owner(opts RuntimeOptions) apply.Owner {
	if opts.Replay != nil && opts.Replay.Owner != nil {
		return opts.Replay.Owner
	}
	return owner{r}
}

func (o owner) Alert(ctx context.Context, text string) (string, string, error) {
	ch, chat := o.rt.inputs.OwnerChannel, o.rt.inputs.OwnerChat
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
