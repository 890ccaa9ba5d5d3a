package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/replytext"
)

// replyActs reports whether processing raw may write to other streams
// (see ReplyActs); a hook that cannot tell is assumed to.
func (d *Driver) replyActs(raw string) bool {
	if d.Replies == nil {
		return false
	}
	if a, ok := d.Replies.(ReplyActs); ok {
		return a.Acts(raw)
	}
	return true
}

func (d *Driver) processReply(ctx context.Context, st *turnState, profile sender.SenderProfile) error {
	raw := st.Reply.Text
	if st.Received.IsGroup && strings.TrimSpace(raw) == "SILENT" {
		st.add(turn.TurnSuppressed{Reason: "SILENT"})
		return nil
	}
	out := Processed{Text: raw}
	if d.Replies != nil {
		st.senderWritten = d.replyActs(raw)
		var err error
		if out, err = d.Replies.Process(ctx, &st.Turn, raw, 0); err != nil {
			return err
		}
	}
	st.add(out.Events...)
	st.add(turn.ReplyReady{Text: out.Text})
	return nil
}

// replyText is what the send step delivers for the turn's outcome.
func (d *Driver) replyText(st *turnState, profile sender.SenderProfile) string {
	return replytext.For(&st.Turn, d.language(st, profile), d.Config.Location)
}

func (d *Driver) sendReply(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	kind, text := st.ReplyKind(), d.replyText(st, profile)
	// From here on the sender may read the answer and write again before
	// the completion is recorded: that message is not queued behind this
	// turn, so it must not be acknowledged as if it were.
	d.Replied.Mark(st.ID)
	if strings.TrimSpace(text) == "" {
		// Nothing left to say (e.g. the reply was only markers).
		st.add(turn.ReplySent{Kind: kind})
		return nil
	}
	res, err := d.deliver(ctx, st, text)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("reply not delivered", "kind", kind, "err", err)
		st.addOutcome(turn.ReplyFailed{Kind: kind, Class: deliveryClass(err), Error: d.Config.Redactor.Error(err)})
		return nil
	}
	sent := turn.ReplySent{Kind: kind, Text: text, Chunks: res.Chunks, PlatformIDs: res.PlatformIDs, PlainText: res.PlainText}
	st.addOutcome(sent.WithoutReadyText(st.Ready))
	return nil
}

func deliveryClass(err error) string { return channels.FailureClass(err) }

var errNoChannel = channels.ErrNoChannel

// send delivers text to the turn's chat as a new message.
func (d *Driver) send(ctx context.Context, st *turnState, text string) (channels.SendResult, error) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return channels.SendResult{}, fmt.Errorf("%w: %s", errNoChannel, st.Received.Channel)
	}
	return d.retry(ctx, func(ctx context.Context) (channels.SendResult, error) {
		return ch.SendText(ctx, st.Received.ChatID, text)
	})
}

// retry runs send, retrying transient failures a few times; refusals
// (blocked, rejected) are final at once.
func (d *Driver) retry(ctx context.Context, send func(context.Context) (channels.SendResult, error)) (channels.SendResult, error) {
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
