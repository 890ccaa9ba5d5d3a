package signal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// sendResult is what signal-cli's send answers: the message's timestamp
// and each recipient's outcome.
type sendResult struct {
	Timestamp int64 `json:"timestamp"`
	Results   []struct {
		Type              string `json:"type"`
		RetryAfterSeconds int    `json:"retryAfterSeconds"`
	} `json:"results"`
}

// rateLimitRetries is how often one send waits out a rate limit.
const rateLimitRetries = 3

// errRateLimited: Signal's server rate limited every recipient.
type errRateLimited struct{ after time.Duration }

func (e errRateLimited) Error() string {
	return "rate limited by Signal, retry after " + e.after.String()
}

// target is the send parameters that address chatID.
func target(chatID string) (map[string]any, error) {
	if id, ok := strings.CutPrefix(chatID, groupPrefix); ok {
		if id == "" {
			return nil, fmt.Errorf("%w: signal: empty group id", channels.ErrRejected)
		}
		return map[string]any{"groupId": id}, nil
	}
	if !validNumber(chatID) && !validACI(chatID) {
		return nil, fmt.Errorf("%w: signal: chat %q: want +E.164, an ACI or group:<id>", channels.ErrRejected, chatID)
	}
	return map[string]any{"recipient": []string{chatID}}, nil
}

// SendText implements channels.Channel: the Markdown as text with
// Signal's styles, in messages of at most 2,000 characters.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	to, err := target(chatID)
	if err != nil {
		return res, err
	}
	ms := messages(text)
	if len(ms) == 0 {
		return res, fmt.Errorf("signal: send to %s: empty message: %w", chatID, channels.ErrRejected)
	}
	for _, m := range ms {
		params := clone(to)
		params["message"] = m.text
		if len(m.styles) > 0 {
			params["textStyle"] = m.styles
		}
		ts, err := c.send(ctx, chatID, params)
		if err != nil {
			return res, err
		}
		res.PlatformIDs = append(res.PlatformIDs, c.cfg.Account+":"+strconv.FormatInt(ts, 10))
		res.Chunks++
	}
	return res, nil
}

// SendPhoto implements channels.Channel.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: the image goes as a
// data URI attachment, the caption as its message.
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	to, err := target(chatID)
	if err != nil {
		return channels.SendResult{}, err
	}
	if len(photo.Data) == 0 {
		return channels.SendResult{}, fmt.Errorf("%w: signal: empty image", channels.ErrRejected)
	}
	name := path.Base(photo.Name)
	if name == "." || name == "/" || strings.ContainsAny(name, ";,") {
		name = "image"
	}
	mime := photo.MIME
	if mime == "" {
		mime = "application/octet-stream"
	}
	to["attachments"] = []string{"data:" + mime + ";filename=" + name + ";base64," + base64.StdEncoding.EncodeToString(photo.Data)}
	if ms := messages(caption); len(ms) > 0 {
		to["message"] = ms[0].text
		if len(ms[0].styles) > 0 {
			to["textStyle"] = ms[0].styles
		}
	}
	ts, err := c.send(ctx, chatID, to)
	if err != nil {
		return channels.SendResult{}, err
	}
	return channels.SendResult{PlatformIDs: []string{c.cfg.Account + ":" + strconv.FormatInt(ts, 10)}, Chunks: 1}, nil
}

// SendTyping implements channels.Channel.
func (c *Channel) SendTyping(ctx context.Context, chatID string) error {
	to, err := target(chatID)
	if err != nil {
		return err
	}
	return c.rpc.call(ctx, "sendTyping", to, nil)
}

// send calls send, waiting out rate limits, and classifies the failure.
func (c *Channel) send(ctx context.Context, chatID string, params map[string]any) (int64, error) {
	for attempt := 0; ; attempt++ {
		ts, err := c.sendOnce(ctx, params)
		var rl errRateLimited
		if !errors.As(err, &rl) || attempt == rateLimitRetries {
			if err != nil {
				return 0, fmt.Errorf("signal: send to %s: %w", chatID, err)
			}
			return ts, nil
		}
		c.log.Warn("signal: rate limited, waiting as Signal asks", "chat", chatID, "retry_after", rl.after)
		if err := c.sleep(ctx, rl.after); err != nil {
			return 0, fmt.Errorf("signal: send to %s: %w", chatID, err)
		}
	}
}

func (c *Channel) sendOnce(ctx context.Context, params map[string]any) (int64, error) {
	var res sendResult
	err := c.rpc.call(ctx, "send", params, &res)
	var re *rpcError
	if errors.As(err, &re) {
		var data struct {
			Response sendResult `json:"response"`
		}
		if len(re.Data) > 0 && json.Unmarshal(re.Data, &data) == nil && len(data.Response.Results) > 0 {
			return 0, outcome(data.Response, err)
		}
		if re.Code == -1 || re.Code == -32600 || re.Code == -32602 {
			return 0, fmt.Errorf("%w: %w", channels.ErrRejected, err)
		}
		return 0, err
	}
	if err != nil {
		return 0, err
	}
	if err := outcome(res, nil); err != nil {
		return 0, err
	}
	return res.Timestamp, nil
}

// outcome is a send's failure from its recipients' results: nil when
// one of them got it.
func outcome(res sendResult, cause error) error {
	var rl time.Duration
	kinds := map[string]bool{}
	for _, r := range res.Results {
		if r.Type == "SUCCESS" {
			return nil
		}
		kinds[r.Type] = true
		if r.Type == "RATE_LIMIT_FAILURE" || r.Type == "PROOF_REQUIRED_FAILURE" {
			rl = max(rl, time.Duration(max(r.RetryAfterSeconds, 1))*time.Second)
		}
	}
	switch {
	case len(res.Results) == 0:
		return cause
	case kinds["UNREGISTERED_FAILURE"]:
		return fmt.Errorf("%w: the number is not on Signal", channels.ErrBlocked)
	case kinds["IDENTITY_FAILURE"]:
		return fmt.Errorf("%w: the recipient's safety number changed; trust it with signal-cli trust", channels.ErrBlocked)
	case rl > 0:
		return errRateLimited{after: rl}
	}
	return fmt.Errorf("signal: not delivered (%v)", keys(kinds))
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}
