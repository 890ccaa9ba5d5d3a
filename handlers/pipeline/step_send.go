package pipeline

import (
	"context"
	"log/slog"
	"strings"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/deliver"
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

// chat is where the turn's replies go.
func (d *Driver) chat(st *turnState) deliver.Chat {
	return deliver.Chat{Channels: d.Channels, Channel: st.Received.Channel, ID: st.Received.ChatID}
}

// send delivers text to the turn's chat as a new message.
func (d *Driver) send(ctx context.Context, st *turnState, text string) (channels.SendResult, error) {
	return d.chat(st).Text(ctx, text)
}
