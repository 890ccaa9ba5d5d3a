package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
	"github.com/omega-gateway/omega/channels/whatsapp/wapreview"
)

// StartPreview implements channels.Previewer: the reply is one message,
// edited as it grows; where WhatsApp refuses edits, its paragraphs follow
// as messages as they complete (package wapreview). A new preview in a
// chat ends the chat's previous one.
func (c *Channel) StartPreview(ctx context.Context, chatID string) (channels.Preview, error) {
	jid, err := c.target(chatID)
	if err != nil {
		return nil, err
	}
	return c.previews.Start(ctx, chatID, jid), nil
}

// FinishPreview implements channels.Previewer: the final reply, formatted
// and chunked as SendText does, replaces the preview. Its first chunk is
// an edit of the preview message (skipped when the preview shows it
// already), the rest follow as new messages. When WhatsApp refuses the
// edit, or refused edits during the preview, only what the preview does
// not show yet follows as new messages.
func (c *Channel) FinishPreview(ctx context.Context, chatID, previewID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	jid, err := c.target(chatID)
	if err != nil {
		return res, err
	}
	last := c.previews.End(chatID, previewID)
	if previewID == "" {
		previewID = last.MsgID
	}
	chunks := waformat.Messages(text)
	if len(chunks) == 0 {
		return res, fmt.Errorf("whatsapp: finish preview in %s: empty message: %w", chatID, channels.ErrRejected)
	}
	if previewID == "" {
		return c.sendChunks(ctx, jid, chatID, chunks, res)
	}
	res.PlatformIDs, res.Chunks = []string{previewID}, 1
	if last.Blocks {
		res.PlatformIDs = append(res.PlatformIDs, last.BlockIDs...)
		res.Chunks += len(last.BlockIDs)
		return c.sendChunks(ctx, jid, chatID, waformat.Messages(unshown(text, last)), res)
	}
	if last.MsgID == previewID && last.Shown == chunks[0] {
		return c.sendChunks(ctx, jid, chatID, chunks[1:], res)
	}
	edit := c.client.BuildEdit(jid, previewID, &waE2E.Message{Conversation: proto.String(chunks[0])})
	_, err = c.client.SendMessage(ctx, jid, edit)
	switch {
	case err == nil:
		return c.sendChunks(ctx, jid, chatID, chunks[1:], res)
	case errors.Is(sendError(chatID, err), channels.ErrNotConnected):
		return channels.SendResult{}, sendError(chatID, err)
	}
	c.log.Info("whatsapp: final edit refused, sending the rest of the reply", "chat", chatID, "err", err)
	if !last.Live || last.ShownMD == "" {
		// What the preview shows is not known (a restart): all of it.
		return c.sendChunks(ctx, jid, chatID, chunks, channels.SendResult{})
	}
	return c.sendChunks(ctx, jid, chatID, waformat.Messages(unshown(text, last)), res)
}

// unshown is the part of the final Markdown text the preview's messages
// do not show: all of it when the preview showed something else.
func unshown(text string, last wapreview.State) string {
	if rest, ok := strings.CutPrefix(text, last.ShownMD); ok {
		return rest
	}
	return text
}

// sendChunks sends chunks as new messages, adding them to res.
func (c *Channel) sendChunks(ctx context.Context, jid types.JID, chatID string, chunks []string, res channels.SendResult) (channels.SendResult, error) {
	for _, chunk := range chunks {
		resp, err := c.sendMessage(ctx, jid, &waE2E.Message{Conversation: proto.String(chunk)})
		if err != nil {
			return res, sendError(chatID, err)
		}
		c.seen.Add(resp.ID) // never take our own reply in the self-chat for input
		res.PlatformIDs = append(res.PlatformIDs, resp.ID)
		res.Chunks++
	}
	return res, nil
}
