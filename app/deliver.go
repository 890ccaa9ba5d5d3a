package app

import (
	"context"
	"errors"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/handlers/intake"
)

// Deliver is what channels call with each incoming message: a message
// seen before is acknowledged again without a second turn.
func (r *Runtime) Deliver(ctx context.Context, in channels.Incoming) error {
	id, err := r.Gateway.Receive(ctx, in)
	if errors.Is(err, intake.ErrDuplicate) {
		r.Logger.Info("duplicate message ignored", "channel", in.Channel, "platform_id", in.PlatformID)
		return nil
	}
	if err == nil {
		r.delivered.Track(ctx, id)
	}
	return err
}

// WaitIdle waits until every turn delivered through Deliver has completed.
func (r *Runtime) WaitIdle(ctx context.Context) error { return r.delivered.WaitIdle(ctx) }
