package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/channels/telegram/botapi"
	"github.com/omega-gateway/omega/domain/intake"

	ta "github.com/mymmrac/telego/telegoapi"
	"github.com/omega-gateway/omega/channels"
)

// mediaAttempts is how often an update whose media cannot be fetched is
// retried before it is delivered without the media (with a note), so one
// broken file cannot stall the chat forever.
const mediaAttempts = 3

// poll long-polls getUpdates until ctx ends. The offset only moves past
// an update once it was delivered (or deliberately skipped), so an update
// is never lost; Telegram redelivers unconfirmed updates after a restart
// and the pipeline deduplicates them on PlatformID.
func (c *Channel) poll(ctx context.Context, deliver channels.Deliver) {
	var offset int64
	b := c.newBackoff()
	for ctx.Err() == nil {
		updates, err := c.fetchUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			wait := b.next()
			if asked, limited := botapi.RetryAfter(err); limited && asked > wait {
				// Polling sooner than flood control asks only earns
				// another 429.
				wait = asked
			}
			failures := c.health.Failed(pollState(err), err.Error())
			c.log.Warn("telegram getUpdates failed", "err", err, "backoff", wait, "failed_polls", failures)
			if c.sleep(ctx, wait) != nil {
				return
			}
			continue
		}
		b.reset()
		c.health.OK()
		for _, raw := range updates {
			id, ok := updateID(raw)
			if !ok {
				c.log.Warn("telegram update without update_id skipped")
				continue
			}
			if id < offset {
				continue
			}
			if c.handle(ctx, id, raw, deliver) != nil {
				return // ctx ended; the update stays unconfirmed
			}
			offset = id + 1
		}
	}
}

// fetchUpdates calls getUpdates and returns the raw updates, so that one
// malformed update can be skipped without losing the others.
func (c *Channel) fetchUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{
		"offset":          offset,
		"timeout":         int(c.pollTimeout.Seconds()),
		"allowed_updates": []string{"message"},
	})
	if err != nil {
		return nil, fmt.Errorf("encode getUpdates: %w", err)
	}
	// The API answers a long poll within its timeout; one unanswered
	// StallGrace later is abandoned, so a stalled connection costs
	// seconds, not a restart.
	deadline := c.pollTimeout + c.stallGrace
	callCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	url := c.cfg.APIURL + "/bot" + c.cfg.Token + "/getUpdates"
	resp, err := c.caller.Call(callCtx, url, &ta.RequestData{ContentType: ta.ContentTypeJSON, BodyRaw: body})
	if err != nil {
		if ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no answer within %s", errStalled, deadline)
		}
		return nil, fmt.Errorf("getUpdates: %w", c.redact(err))
	}
	if !resp.Ok {
		if resp.Error == nil {
			return nil, fmt.Errorf("getUpdates: not ok")
		}
		return nil, fmt.Errorf("getUpdates: %w", resp.Error)
	}
	var updates []json.RawMessage
	if err := json.Unmarshal(resp.Result, &updates); err != nil {
		return nil, fmt.Errorf("decode getUpdates result: %w", err)
	}
	return updates, nil
}

func updateID(raw json.RawMessage) (int64, bool) {
	var head struct {
		UpdateID *int64 `json:"update_id"`
	}
	if json.Unmarshal(raw, &head) != nil || head.UpdateID == nil {
		return 0, false
	}
	return *head.UpdateID, true
}

// handle maps and delivers one update, retrying with backoff until it
// succeeds or ctx ends. It returns non-nil only when ctx ended.
func (c *Channel) handle(ctx context.Context, id int64, raw json.RawMessage, deliver channels.Deliver) error {
	b := c.newBackoff()
	for attempt := 1; ; attempt++ {
		in, ok, err := c.toIncoming(ctx, raw, attempt >= mediaAttempts)
		if err == nil && !ok {
			return nil
		}
		if err == nil {
			if err = deliver(ctx, in); err == nil {
				return nil
			}
			if errors.Is(err, intake.ErrInvalidMessage) {
				// Retrying cannot help, and holding the offset would block
				// every update after this one.
				c.log.Warn("telegram update refused at intake; skipped", "update_id", id, "chat", in.ChatID, "sender", in.SenderID, "err", err)
				return nil
			}
			err = fmt.Errorf("deliver: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := b.next()
		c.log.Warn("telegram update not handled, retrying", "update_id", id, "attempt", attempt, "err", err, "backoff", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}
