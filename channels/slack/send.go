package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/slack-go/slack"

	"github.com/omega-gateway/omega/channels"
)

// rateLimitRetries is how often one call waits out a 429 before giving up.
const rateLimitRetries = 5

// SendText implements channels.Channel: the Markdown as mrkdwn, in
// messages Slack shows whole, in the chat's thread.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	channel, thread, err := parseChat(chatID)
	if err != nil {
		return channels.SendResult{}, fmt.Errorf("%w: %w", channels.ErrRejected, err)
	}
	chunks := messages(text)
	if len(chunks) == 0 {
		return channels.SendResult{}, fmt.Errorf("slack: send to %s: empty message: %w", chatID, channels.ErrRejected)
	}
	return c.post(ctx, channel, thread, chunks, channels.SendResult{})
}

// post sends chunks as new messages in the thread, adding them to res.
func (c *Channel) post(ctx context.Context, channel, thread string, chunks []string, res channels.SendResult) (channels.SendResult, error) {
	for _, chunk := range chunks {
		opts := []slack.MsgOption{slack.MsgOptionText(chunk, false)}
		if thread != "" {
			opts = append(opts, slack.MsgOptionTS(thread))
		}
		var ts string
		err := c.retry(ctx, "chat.postMessage", func() error {
			var err error
			_, ts, err = c.api.PostMessageContext(ctx, channel, opts...)
			return err
		})
		if err != nil {
			return res, err
		}
		res.PlatformIDs = append(res.PlatformIDs, channel+":"+ts)
		res.Chunks++
	}
	return res, nil
}

// SendPhoto implements channels.Channel.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: the image is
// uploaded (files.getUploadURLExternal, the upload, then
// files.completeUploadExternal) and shared in the chat's thread.
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	channel, thread, err := parseChat(chatID)
	if err != nil {
		return channels.SendResult{}, fmt.Errorf("%w: %w", channels.ErrRejected, err)
	}
	if len(photo.Data) == 0 {
		return channels.SendResult{}, fmt.Errorf("%w: slack: empty image", channels.ErrRejected)
	}
	name := path.Base(photo.Name)
	if name == "." || name == "/" {
		name = "image"
	}
	var sum *slack.FileSummary
	err = c.retry(ctx, "files upload", func() error {
		var err error
		sum, err = c.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Reader: bytes.NewReader(photo.Data), FileSize: len(photo.Data), Filename: name, Title: name,
			Channel: channel, ThreadTimestamp: thread, InitialComment: toMrkdwn(caption),
		})
		return err
	})
	if err != nil {
		return channels.SendResult{}, err
	}
	return channels.SendResult{PlatformIDs: []string{"file:" + sum.ID}, Chunks: 1}, nil
}

// retry runs call, waiting out Slack's Retry-After on 429, and classifies
// the final failure.
func (c *Channel) retry(ctx context.Context, method string, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil {
			return nil
		}
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt == rateLimitRetries {
			return classify(method, err)
		}
		wait := max(rl.RetryAfter, time.Second)
		c.log.Warn("slack: rate limited, waiting as Slack asks", "method", method, "retry_after", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("slack: %s: %w", method, err)
		}
	}
}

// The Web API's error codes by delivery failure class.
var (
	blockedCodes  = []string{"channel_not_found", "not_in_channel", "is_archived", "user_not_found", "account_inactive", "cannot_dm_bot", "user_disabled"}
	rejectedCodes = []string{"msg_too_long", "no_text", "invalid_blocks", "invalid_arguments", "too_many_attachments", "restricted_action", "invalid_thread_ts", "thread_reply_not_allowed"}
	authCodes     = []string{"invalid_auth", "not_authed", "token_revoked", "token_expired", "missing_scope"}
)

func classify(method string, err error) error {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case contains(blockedCodes, se.Err):
			return fmt.Errorf("slack: %s: %w (%s)", method, channels.ErrBlocked, se.Err)
		case contains(rejectedCodes, se.Err):
			return fmt.Errorf("slack: %s: %w (%s)", method, channels.ErrRejected, se.Err)
		case contains(authCodes, se.Err):
			return fmt.Errorf("slack: %s: %w (%s)", method, channels.ErrNotConnected, se.Err)
		}
	}
	return fmt.Errorf("slack: %s: %w", method, apiError{err})
}

// apiError shows a Web API failure as describe does, keeping the
// library's error for errors.As.
type apiError struct{ err error }

func (e apiError) Error() string { return describe(e.err) }
func (e apiError) Unwrap() error { return e.err }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
