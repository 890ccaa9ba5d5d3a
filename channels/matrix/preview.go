package matrix

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
)

// previewEvery paces a preview's edits: homeservers rate-limit senders,
// and a person reads no faster.
const previewEvery = time.Second

var _ channels.Previewer = (*Channel)(nil)

// preview is one reply shown while it is written: a message replaced
// (m.replace) as the reply grows, at most once per previewEvery.
type preview struct {
	c    *Channel
	room string

	mu     sync.Mutex
	id     string // the message's event id; empty until it is sent
	shown  string // the Markdown it shows
	last   time.Time
	closed bool
}

// ID implements channels.Preview.
func (p *preview) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id
}

// Update implements channels.Preview: it shows the first chunk of text,
// cut before an unclosed span, unless the last edit was under
// previewEvery ago.
func (p *preview) Update(ctx context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	part := strings.TrimSpace(markdown.HoldOpen(chunk(text, maxChunk)[0]))
	if p.closed || part == "" || part == p.shown || (p.id != "" && p.c.now().Sub(p.last) < previewEvery) {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, p.c.cfg.RequestTimeout)
	defer cancel()
	content := textMessage(part)
	if p.id != "" {
		content = editOf(p.id, part)
	}
	id, err := p.c.cli.SendMessage(rctx, p.room, p.c.cli.NewTxn(), content)
	if err != nil {
		// A missed edit is made good by the next one or the final reply.
		p.c.log.Warn("matrix: preview not updated", "room", p.room, "err", err)
		return nil
	}
	if p.id == "" {
		p.id = id
	}
	p.shown, p.last = part, p.c.now()
	return nil
}

func (p *preview) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// StartPreview implements channels.Previewer; a new preview in a chat
// ends the chat's previous one.
func (c *Channel) StartPreview(ctx context.Context, chatID string) (channels.Preview, error) {
	room, err := c.chatRoom(ctx, chatID)
	if err != nil {
		return nil, err
	}
	p := &preview{c: c, room: room}
	if old, replaced := c.previews.Replace(chatID, p); replaced {
		old.close()
	}
	return p, nil
}

// FinishPreview implements channels.Previewer: the final reply's first
// chunk replaces the preview message, the rest follow as new messages.
func (c *Channel) FinishPreview(ctx context.Context, chatID, previewID, text string) (channels.SendResult, error) {
	p, ok := c.previews.Take(chatID, previewID)
	if ok {
		p.close()
	}
	if !ok || p.ID() == "" {
		return c.SendText(ctx, chatID, text)
	}
	parts := chunk(text, maxChunk)
	res := channels.SendResult{PlatformIDs: []string{p.id}, Chunks: 1}
	if _, err := c.send(ctx, p.room, editOf(p.id, parts[0])); err != nil {
		return channels.SendResult{}, err
	}
	for _, part := range parts[1:] {
		id, err := c.send(ctx, p.room, textMessage(part))
		if err != nil {
			return res, err
		}
		res.PlatformIDs = append(res.PlatformIDs, id)
		res.Chunks++
	}
	return res, nil
}

// textMessage is Markdown as an m.text message: the Markdown as its
// plain body, rendered as HTML beside it; it mentions no one.
func textMessage(md string) *mxapi.Message {
	return &mxapi.Message{MsgType: mxapi.MsgText, Body: md, Format: mxapi.FormatHTML, FormattedBody: renderHTML(md), Mentions: &mxapi.Mentions{}}
}

// editOf replaces event id's content with md (m.replace); clients that
// do not know edits show the "* " fallback.
func editOf(id, md string) *mxapi.Message {
	m := textMessage("* " + md)
	m.FormattedBody = "* " + renderHTML(md)
	m.NewContent = textMessage(md)
	m.RelatesTo = &mxapi.RelatesTo{RelType: mxapi.RelReplace, EventID: id}
	return m
}
