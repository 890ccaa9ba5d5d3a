package whatsapp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
)

// previewInterval spaces the changes of one reply's preview: every edit
// is a message to each of the chat's devices, and WhatsApp is quick to
// suspect a bot that sends fast.
const previewInterval = 1500 * time.Millisecond

var _ channels.Previewer = (*Channel)(nil)

// StartPreview implements channels.Previewer: the reply is one message,
// edited as it grows; where WhatsApp refuses edits, its paragraphs follow
// as messages as they complete. A new preview in a chat ends the chat's
// previous one.
func (c *Channel) StartPreview(ctx context.Context, chatID string) (channels.Preview, error) {
	jid, err := c.target(chatID)
	if err != nil {
		return nil, err
	}
	p := &preview{c: c, chatID: chatID, jid: jid, ctx: ctx}
	c.previewMu.Lock()
	old := c.previews[chatID]
	c.previews[chatID] = p
	c.previewMu.Unlock()
	if old != nil {
		old.close()
	}
	return p, nil
}

// endPreview stops the chat's live preview if it is the one previewID
// names (any, for an empty previewID) and returns its last state.
func (c *Channel) endPreview(chatID, previewID string) previewState {
	c.previewMu.Lock()
	p := c.previews[chatID]
	if p != nil && (previewID == "" || p.ID() == previewID) {
		delete(c.previews, chatID)
	} else {
		p = nil
	}
	c.previewMu.Unlock()
	if p == nil {
		return previewState{}
	}
	return p.close()
}

// previewState is what a preview showed when it ended.
type previewState struct {
	live     bool
	msgID    string   // the edited message, "" for none
	shown    string   // its text
	shownMD  string   // the Markdown the messages show, in order
	blocks   bool     // edits were refused: blockIDs follow msgID
	blockIDs []string // the paragraph messages after msgID
}

// preview is one reply shown while it is written. Update never waits: it
// keeps the latest text and shows it when the interval allows, now or
// from a timer, so updates coalesce.
type preview struct {
	c      *Channel
	chatID string
	jid    types.JID

	mu      sync.Mutex // held during sends, so close waits for one in flight
	ctx     context.Context
	pending string // the latest Markdown
	dirty   bool
	state   previewState
	full    bool // the message shows a whole chunk: more text changes nothing
	next    time.Time
	stop    func() bool
	closed  bool
	idMu    sync.Mutex
	id      string
}

// ID implements channels.Preview.
func (p *preview) ID() string {
	p.idMu.Lock()
	defer p.idMu.Unlock()
	return p.id
}

func (p *preview) setID(id string) {
	p.idMu.Lock()
	defer p.idMu.Unlock()
	p.id = id
}

// Update implements channels.Preview.
func (p *preview) Update(ctx context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || (p.full && !p.dirty && !p.state.blocks) {
		return nil
	}
	p.ctx, p.pending, p.dirty = ctx, text, true
	return p.flush()
}

func (p *preview) close() previewState {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
	st := p.state
	st.live = true
	st.blockIDs = append([]string(nil), st.blockIDs...)
	return st
}

// flush shows the pending text if the interval allows it now, and
// otherwise schedules itself. p.mu is held.
func (p *preview) flush() error {
	if !p.dirty {
		return nil
	}
	now := p.c.now()
	if wait := p.next.Sub(now); wait > 0 {
		p.schedule(wait)
		return nil
	}
	p.dirty = false
	md := markdown.HoldOpen(p.pending)
	var sent bool
	var err error
	if p.state.blocks {
		sent, err = p.showBlocks(md)
	} else {
		sent, err = p.showEdit(md)
	}
	if sent {
		p.next = now.Add(previewInterval)
	}
	if errors.Is(err, channels.ErrNotConnected) {
		// Reconnecting: show the latest text once it is back.
		p.dirty, p.next = true, now.Add(previewInterval)
		p.schedule(previewInterval)
		return nil
	}
	if err != nil {
		p.closed = true
	}
	return err
}

// showEdit shows md in the preview message, sending it first, then
// editing it. An edit WhatsApp refuses turns the preview into blocks.
func (p *preview) showEdit(md string) (bool, error) {
	text, full := firstChunk(md)
	p.full = full
	if text == "" || text == p.state.shown {
		return false, nil
	}
	msg := &waE2E.Message{Conversation: proto.String(text)}
	if p.state.msgID != "" {
		msg = p.c.client.BuildEdit(p.jid, p.state.msgID, msg)
	}
	id, err := p.send(msg)
	switch {
	case err == nil && p.state.msgID == "":
		p.state.msgID = id
		p.setID(id)
	case err != nil && p.state.msgID != "" && !errors.Is(err, channels.ErrNotConnected):
		p.c.log.Info("whatsapp: edit refused, previewing by paragraphs", "chat", p.chatID, "err", err)
		p.state.blocks = true
		return p.showBlocks(md)
	case err != nil:
		return false, err
	}
	p.state.shown = text
	if !full {
		p.state.shownMD = md
	}
	return true, nil
}

// showBlocks sends the paragraphs of md completed since the last one
// shown, as new messages.
func (p *preview) showBlocks(md string) (bool, error) {
	if !strings.HasPrefix(md, p.state.shownMD) {
		return false, nil
	}
	end := completedParagraphs(md, len(p.state.shownMD))
	if end <= len(p.state.shownMD) {
		return false, nil
	}
	for _, chunk := range waformat.Messages(md[len(p.state.shownMD):end]) {
		id, err := p.send(&waE2E.Message{Conversation: proto.String(chunk)})
		if err != nil {
			return true, err
		}
		p.state.blockIDs = append(p.state.blockIDs, id)
	}
	p.state.shownMD = md[:end]
	return true, nil
}

func (p *preview) send(msg *waE2E.Message) (string, error) {
	resp, err := p.c.client.SendMessage(p.ctx, p.jid, msg)
	if err != nil {
		return "", sendError(p.chatID, err)
	}
	p.c.seen.Add(resp.ID)
	return resp.ID, nil
}

func (p *preview) schedule(d time.Duration) {
	if p.stop != nil {
		return
	}
	p.stop = p.c.after(d, p.fire)
}

func (p *preview) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = nil
	if p.closed || p.ctx.Err() != nil {
		return
	}
	if err := p.flush(); err != nil {
		p.c.log.Warn("whatsapp: reply preview ended", "chat", p.chatID, "err", err)
	}
}

// firstChunk is what the preview message shows of md: the first
// message's worth, as the final reply's first chunk will be, and whether
// that is full, so more text no longer changes it.
func firstChunk(md string) (string, bool) {
	chunks := waformat.Messages(md)
	if len(chunks) == 0 {
		return "", false
	}
	return chunks[0], len(chunks) > 1
}

// completedParagraphs is the end of the last paragraph of md completed
// after from: the position after its blank line, outside code blocks.
// It returns from when none was completed.
func completedParagraphs(md string, from int) int {
	end, inFence := from, false
	lineStart := 0
	for i := 0; i <= len(md); i++ {
		if i < len(md) && md[i] != '\n' {
			continue
		}
		line := md[lineStart:i]
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if strings.TrimSpace(line) == "" && i < len(md) && !inFence && lineStart > from {
			end = i + 1
		}
		lineStart = i + 1
	}
	return end
}
