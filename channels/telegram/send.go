package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"
	tu "github.com/mymmrac/telego/telegoutil"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/botapi"
	"github.com/omega-gateway/omega/channels/telegram/tgtext"
)

const (
	// maxSendAttempts bounds retries after 429 Too Many Requests.
	maxSendAttempts = 5
	// maxCaptionLen is Telegram's caption limit in UTF-16 code units.
	maxCaptionLen = 1024
	parseModeHTML = "HTML"
)

// SendText implements channels.Channel: Markdown is converted to Telegram
// HTML, split into messages of at most 4096 UTF-16 units and sent in
// order. A chunk whose entities Telegram rejects is resent as plain text.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	id, err := parseChatID(chatID)
	if err != nil {
		return res, err
	}
	chunks := tgtext.Chunk(tgtext.MarkdownToHTML(text), tgtext.MaxMessageLen)
	if len(chunks) == 0 {
		return res, fmt.Errorf("telegram send to chat %s: empty message: %w", chatID, channels.ErrRejected)
	}
	return c.sendChunks(ctx, id, chatID, chunks, 0, res)
}

// sendChunks sends chunks[from:] as new messages, adding them to res.
func (c *Channel) sendChunks(ctx context.Context, id int64, chatID string, chunks []string, from int, res channels.SendResult) (channels.SendResult, error) {
	for i := from; i < len(chunks); i++ {
		msg, plain, err := c.sendChunk(ctx, id, chatID, chunks[i])
		if err != nil {
			return res, fmt.Errorf("telegram send chunk %d/%d to chat %s: %w", i+1, len(chunks), chatID, err)
		}
		res.PlatformIDs = append(res.PlatformIDs, strconv.Itoa(msg.MessageID))
		res.Chunks++
		res.PlainText = res.PlainText || plain
	}
	return res, nil
}

func (c *Channel) sendChunk(ctx context.Context, id int64, chatID, chunk string) (*telego.Message, bool, error) {
	var msg *telego.Message
	err := c.sendPaced(ctx, chatID, func(ctx context.Context) (err error) {
		msg, err = c.bot.SendMessage(ctx, &telego.SendMessageParams{ChatID: tu.ID(id), Text: chunk, ParseMode: parseModeHTML})
		return err
	})
	if !botapi.IsEntityError(err) {
		return msg, false, err
	}
	c.log.Warn("telegram rejected formatting, sending plain text", "chat", chatID, "err", err)
	plain := tgtext.HTMLToPlain(chunk)
	err = c.sendPaced(ctx, chatID, func(ctx context.Context) (err error) {
		msg, err = c.bot.SendMessage(ctx, &telego.SendMessageParams{ChatID: tu.ID(id), Text: plain})
		return err
	})
	return msg, true, err
}

// SendCourtesy implements channels.CourtesySender: a short message sent
// only when the pacer can spare a slot now (see botapi.Pacer.TryCourtesy), as one
// plain chunk and without waiting out flood control.
func (c *Channel) SendCourtesy(ctx context.Context, chatID, text string) (bool, error) {
	id, err := parseChatID(chatID)
	if err != nil {
		return false, err
	}
	if !c.pacer.TryCourtesy(chatID, c.now()) {
		c.log.Debug("courtesy message skipped: chat at its pacing limit", "chat", chatID)
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if _, err := c.bot.SendMessage(ctx, &telego.SendMessageParams{ChatID: tu.ID(id), Text: text}); err != nil {
		return false, fmt.Errorf("telegram courtesy message to chat %s: %w", chatID, c.classify(err))
	}
	return true, nil
}

// SendTyping implements channels.Channel. Chat actions count against the
// pacing budget but never wait for it and are not retried: a late typing
// indicator is worthless, so one without a free slot is skipped.
func (c *Channel) SendTyping(ctx context.Context, chatID string) error {
	id, err := parseChatID(chatID)
	if err != nil {
		return err
	}
	if !c.pacer.TryAction(chatID, c.now()) {
		c.log.Debug("typing indicator skipped: chat at its pacing limit", "chat", chatID)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	err = c.bot.SendChatAction(ctx, &telego.SendChatActionParams{ChatID: tu.ID(id), Action: telego.ChatActionTyping})
	if err != nil {
		return fmt.Errorf("telegram typing to chat %s: %w", chatID, c.classify(err))
	}
	return nil
}

// SendPhoto implements channels.Channel. A caption too long for Telegram
// follows the photo as a separate message.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: SendPhoto with the
// ids of the messages sent (the photo, then a caption sent apart).
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	var res channels.SendResult
	id, err := parseChatID(chatID)
	if err != nil {
		return res, err
	}
	htmlCaption := tgtext.MarkdownToHTML(caption)
	separate := tgtext.UTF16Len(htmlCaption) > maxCaptionLen
	if separate {
		htmlCaption = ""
	}
	name := photo.Name
	if name == "" {
		name = "photo.jpg"
	}
	send := func(caption, mode string) error {
		return c.sendPaced(ctx, chatID, func(ctx context.Context) error {
			msg, err := c.bot.SendPhoto(ctx, &telego.SendPhotoParams{
				ChatID:    tu.ID(id),
				Photo:     tu.FileFromBytes(photo.Data, name),
				Caption:   caption,
				ParseMode: mode,
			})
			if err == nil && msg != nil {
				res.PlatformIDs = append(res.PlatformIDs, strconv.Itoa(msg.MessageID))
			}
			return err
		})
	}
	mode := parseModeHTML
	if htmlCaption == "" {
		mode = ""
	}
	err = send(htmlCaption, mode)
	if botapi.IsEntityError(err) {
		err = send(tgtext.HTMLToPlain(htmlCaption), "")
	}
	if err != nil {
		return res, fmt.Errorf("telegram photo to chat %s: %w", chatID, err)
	}
	res.Chunks = 1
	if separate {
		more, err := c.SendText(ctx, chatID, caption)
		if err != nil {
			return res, fmt.Errorf("telegram photo caption: %w", err)
		}
		res.PlatformIDs = append(res.PlatformIDs, more.PlatformIDs...)
		res.Chunks += more.Chunks
	}
	return res, nil
}

// sendPaced waits for the pacer, then calls send, waiting out 429s for a
// bounded number of attempts and an unreachable API for a bounded time
// (see sendRetry). Errors are classified for the pipeline.
func (c *Channel) sendPaced(ctx context.Context, chatID string, send func(context.Context) error) error {
	retry := c.newSendRetry()
	for {
		if err := c.sleep(ctx, c.pacer.Reserve(chatID, c.now())); err != nil {
			return err
		}
		callCtx, cancel := context.WithTimeout(ctx, sendTimeout)
		err := send(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		wait, why, again := retry.next(err)
		if !again {
			return c.classify(err)
		}
		c.log.Warn("telegram send waiting: "+why, "chat", chatID, "wait", wait, "err", c.redact(err))
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// classify wraps API refusals in the channels error classes; other errors
// (network, 5xx) are returned with the token redacted.
func (c *Channel) classify(err error) error {
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) {
		return c.redact(err)
	}
	switch apiErr.ErrorCode {
	case http.StatusForbidden:
		return fmt.Errorf("%w: %w", channels.ErrBlocked, apiErr)
	case http.StatusBadRequest:
		return fmt.Errorf("%w: %w", channels.ErrRejected, apiErr)
	}
	return apiErr
}

func parseChatID(chatID string) (int64, error) {
	id, err := strconv.ParseInt(chatID, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("telegram chat id %q: %w", chatID, channels.ErrRejected)
	}
	return id, nil
}
