// Package deliver sends to a turn's chat: text as a new message or in
// place of the reply's preview, photos, and courtesy messages a paced
// channel may skip; transient failures are retried, refusals are final.
package deliver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// Channels finds the channel a turn's replies go to.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// Chat is one chat on one channel.
type Chat struct {
	Channels Channels
	Channel  string // the channel's name
	ID       string // the chat on it
}

func (c Chat) channel() (channels.Channel, error) {
	ch, ok := c.Channels.Channel(c.Channel)
	if !ok {
		return nil, fmt.Errorf("%w: %s", channels.ErrNoChannel, c.Channel)
	}
	return ch, nil
}

// Text sends text as a new message.
func (c Chat) Text(ctx context.Context, text string) (channels.SendResult, error) {
	ch, err := c.channel()
	if err != nil {
		return channels.SendResult{}, err
	}
	return retry(ctx, func(ctx context.Context) (channels.SendResult, error) {
		return ch.SendText(ctx, c.ID, text)
	})
}

// Final sends a turn's final text: in place of its preview previewID
// when the preview showed, else as a new message.
func (c Chat) Final(ctx context.Context, shown bool, previewID, text string) (channels.SendResult, error) {
	ch, ok := c.Channels.Channel(c.Channel)
	pv, previews := ch.(channels.Previewer)
	if !ok || !previews || !shown {
		return c.Text(ctx, text)
	}
	return retry(ctx, func(ctx context.Context) (channels.SendResult, error) {
		return pv.FinishPreview(ctx, c.ID, previewID, text)
	})
}

// Photo sends an image.
func (c Chat) Photo(ctx context.Context, photo channels.Attachment) (channels.SendResult, error) {
	ch, ok := c.Channels.Channel(c.Channel)
	if !ok {
		return channels.SendResult{}, channels.ErrNoChannel
	}
	return channels.SendPhoto(ctx, ch, c.ID, photo, "")
}

// Courtesy sends a message the reply after it must not wait for: a
// channel that paces its sends sends it only if that costs the reply
// nothing; sent is false when it was skipped for that reason.
func (c Chat) Courtesy(ctx context.Context, text string) (sent bool, err error) {
	ch, err := c.channel()
	if err != nil {
		return false, err
	}
	if cs, ok := ch.(channels.CourtesySender); ok {
		return cs.SendCourtesy(ctx, c.ID, text)
	}
	_, err = c.Text(ctx, text)
	return err == nil, err
}

// retry runs send, retrying transient failures a few times; refusals
// (blocked, rejected) are final at once.
func retry(ctx context.Context, send func(context.Context) (channels.SendResult, error)) (channels.SendResult, error) {
	var err error
	wait := 500 * time.Millisecond
	for attempt := 0; attempt < 4; attempt++ {
		var res channels.SendResult
		res, err = send(ctx)
		if err == nil {
			return res, nil
		}
		if errors.Is(err, channels.ErrBlocked) || errors.Is(err, channels.ErrRejected) || errors.Is(err, channels.ErrNotConnected) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return channels.SendResult{}, err
}
