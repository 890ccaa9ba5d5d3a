package slack

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
)

// previewEvery paces a preview's edits: chat.update is a Tier 3 method
// (about 50 calls a minute).
const previewEvery = time.Second

// preview is one reply shown while it is written: a message posted with
// the first words and edited (chat.update) as the reply grows.
type preview struct {
	c               *Channel
	channel, thread string
	mu              sync.Mutex
	ts, shown       string
	last            time.Time
	broken          error
}

// ID implements channels.Preview: "<channel>:<ts>" once posted.
func (p *preview) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ts == "" {
		return ""
	}
	return p.channel + ":" + p.ts
}

// Update implements channels.Preview: the first chunk of the reply so
// far, at most once a previewEvery; a 429 skips the edit.
func (p *preview) Update(ctx context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken != nil {
		return p.broken
	}
	chunks := messages(markdown.HoldOpen(text))
	if len(chunks) == 0 || chunks[0] == p.shown || (p.ts != "" && p.c.now().Sub(p.last) < previewEvery) {
		return nil
	}
	show := chunks[0]
	var err error
	if p.ts == "" {
		opts := []slack.MsgOption{slack.MsgOptionText(show, false)}
		if p.thread != "" {
			opts = append(opts, slack.MsgOptionTS(p.thread))
		}
		_, p.ts, err = p.c.api.PostMessageContext(ctx, p.channel, opts...)
	} else {
		_, _, _, err = p.c.api.UpdateMessageContext(ctx, p.channel, p.ts, slack.MsgOptionText(show, false))
	}
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return nil
	case err != nil:
		p.broken = classify("preview", err)
		return p.broken
	}
	p.shown, p.last = show, p.c.now()
	return nil
}

// state is what the preview shows, for FinishPreview.
func (p *preview) state() (ts, shown string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ts, p.shown
}

// StartPreview implements channels.Previewer: the reply is one message
// edited as it grows, in the chat's thread. A new preview in a chat ends
// the chat's previous one.
func (c *Channel) StartPreview(_ context.Context, chatID string) (channels.Preview, error) {
	channel, thread, err := parseChat(chatID)
	if err != nil {
		return nil, err
	}
	p := &preview{c: c, channel: channel, thread: thread}
	c.previews.Replace(chatID, p)
	return p, nil
}

// FinishPreview implements channels.Previewer: the final reply, as
// SendText formats and cuts it, replaces the preview; its first chunk is
// an edit of the preview message (skipped when the preview shows it
// already), the rest follow in the thread. A preview message that is
// gone is followed by the whole reply as new messages.
func (c *Channel) FinishPreview(ctx context.Context, chatID, previewID, text string) (channels.SendResult, error) {
	channel, thread, err := parseChat(chatID)
	if err != nil {
		return channels.SendResult{}, err
	}
	ts, shown := "", ""
	if p, ok := c.previews.Take(chatID, previewID); ok {
		ts, shown = p.state()
	}
	if previewID != "" {
		_, ts, _ = strings.Cut(previewID, ":")
	}
	chunks := messages(text)
	if ts == "" || len(chunks) == 0 {
		return c.SendText(ctx, chatID, text)
	}
	if chunks[0] != shown {
		err := c.retry(ctx, "chat.update", func() error {
			_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(chunks[0], false))
			return err
		})
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message") {
			c.log.Info("slack: preview message gone, sending the reply anew", "chat", chatID, "err", se.Err)
			return c.SendText(ctx, chatID, text)
		}
		if err != nil {
			return channels.SendResult{}, err
		}
	}
	res := channels.SendResult{PlatformIDs: []string{channel + ":" + ts}, Chunks: 1}
	return c.post(ctx, channel, thread, chunks[1:], res)
}
