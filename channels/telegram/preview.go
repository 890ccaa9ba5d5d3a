package telegram

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mymmrac/telego"
	tu "github.com/mymmrac/telego/telegoutil"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/botapi"
	"github.com/omega-gateway/omega/channels/telegram/tgpreview"
	"github.com/omega-gateway/omega/channels/telegram/tgtext"
)

// StartPreview implements channels.Previewer. A private chat sees the
// reply as a draft where the Bot API has sendMessageDraft, otherwise as
// one message edited as the reply grows (package tgpreview). Groups,
// where Telegram allows about 20 messages a minute, get the reply whole
// (channels.ErrNoPreview). A new preview in a chat ends the chat's
// previous one.
func (c *Channel) StartPreview(ctx context.Context, chatID string) (channels.Preview, error) {
	id, err := parseChatID(chatID)
	if err != nil {
		return nil, err
	}
	if id < 0 {
		return nil, channels.ErrNoPreview
	}
	return c.previews.Start(ctx, chatID, id), nil
}

// FinishPreview implements channels.Previewer: the final reply, converted
// and chunked as SendText does, replaces the preview. Its first chunk is
// an edit of the preview message (skipped when the preview already shows
// it); the others follow as new messages. A draft, or a preview message
// that is gone, is followed by the reply sent as new messages.
func (c *Channel) FinishPreview(ctx context.Context, chatID, previewID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	id, err := parseChatID(chatID)
	if err != nil {
		return res, err
	}
	last := c.previews.End(chatID, previewID)
	if previewID == "" && last.MsgID != 0 {
		previewID = strconv.FormatInt(last.MsgID, 10)
	}
	chunks := tgtext.Chunk(tgtext.MarkdownToHTML(text), tgtext.MaxMessageLen)
	if len(chunks) == 0 {
		return res, fmt.Errorf("telegram finish preview in chat %s: empty message: %w", chatID, channels.ErrRejected)
	}
	if previewID == "" {
		return c.sendChunks(ctx, id, chatID, chunks, 0, res)
	}
	msgID, err := strconv.Atoi(previewID)
	if err != nil {
		return res, fmt.Errorf("telegram preview id %q: %w", previewID, channels.ErrRejected)
	}
	replaced, plain, err := c.replacePreview(ctx, id, chatID, msgID, chunks[0], last)
	if err != nil {
		return res, fmt.Errorf("telegram finish preview %s in chat %s: %w", previewID, chatID, err)
	}
	if !replaced {
		return c.sendChunks(ctx, id, chatID, chunks, 0, res)
	}
	res.PlatformIDs, res.Chunks, res.PlainText = []string{previewID}, 1, plain
	return c.sendChunks(ctx, id, chatID, chunks, 1, res)
}

// replacePreview edits message msgID to chunk, falling back to plain text
// as SendText does. It reports false when the message is gone, so the
// reply must be sent anew, and whether plain text was shown.
func (c *Channel) replacePreview(ctx context.Context, id int64, chatID string, msgID int, chunk string, last tgpreview.State) (replaced, plain bool, err error) {
	if last.MsgID == int64(msgID) && last.Shown == chunk && !last.Plain {
		return true, false, nil
	}
	edit := func(text, mode string) error {
		return c.sendPaced(ctx, chatID, func(ctx context.Context) error {
			_, err := c.bot.EditMessageText(ctx, &telego.EditMessageTextParams{
				ChatID: tu.ID(id), MessageID: msgID, Text: text, ParseMode: mode,
			})
			return err
		})
	}
	err = edit(chunk, parseModeHTML)
	if botapi.IsEntityError(err) {
		c.log.Warn("telegram rejected formatting, finishing the preview as plain text", "chat", chatID, "err", err)
		plain = true
		err = edit(tgtext.HTMLToPlain(chunk), "")
	}
	switch {
	case err == nil, botapi.IsNotModified(err):
		return true, plain, nil
	case botapi.IsMessageGone(err):
		c.log.Info("telegram preview message gone, sending the reply anew", "chat", chatID, "message", msgID)
		return false, false, nil
	}
	return false, false, err
}
