// Package wapreview shows a WhatsApp reply while it is written: one
// message edited as the reply grows, or, where WhatsApp refuses edits,
// its paragraphs sent as messages as they complete.
package wapreview

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
)

// Interval spaces the changes of one reply's preview: every edit
// is a message to each of the chat's devices, and WhatsApp is quick to
// suspect a bot that sends fast.
const Interval = 1500 * time.Millisecond

// Client is the part of the WhatsApp client a preview sends with.
type Client interface {
	SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error)
	// BuildEdit wraps newContent as an edit of the own message id in chat.
	BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message
}

// Config is what previews need of the channel. Every field is required.
type Config struct {
	Client Client
	Log    *slog.Logger
	Now    func() time.Time
	// After runs f once d has passed; stop cancels it and reports whether
	// it had not run yet.
	After func(d time.Duration, f func()) (stop func() bool)
	// Sent is told the id of every message a preview sends, so the
	// channel never takes its own reply for input.
	Sent func(id string)
	// SendError classifies a failed send to chatID; a preview retries
	// one wrapping channels.ErrNotConnected.
	SendError func(chatID string, err error) error
}

// Previews holds the live preview of each chat.
type Previews struct {
	cfg  Config
	live channels.LivePreviews[*preview]
}

// New validates cfg and returns a set of previews with none live.
func New(cfg Config) (*Previews, error) {
	if cfg.Client == nil || cfg.Log == nil || cfg.Now == nil || cfg.After == nil || cfg.Sent == nil || cfg.SendError == nil {
		return nil, errors.New("whatsapp previews: client, logger, clock, timer, sent and send error are required")
	}
	return &Previews{cfg: cfg}, nil
}

// Start begins a preview of a reply in chatID (whose address is jid),
// ending the chat's previous one.
func (ps *Previews) Start(ctx context.Context, chatID string, jid types.JID) channels.Preview {
	p := &preview{ps: ps, chatID: chatID, jid: jid, ctx: ctx}
	if old, ok := ps.live.Replace(chatID, p); ok {
		old.close()
	}
	return p
}

// End stops the chat's live preview if it is the one previewID names
// (any, for an empty previewID) and returns its last state.
func (ps *Previews) End(chatID, previewID string) State {
	p, ok := ps.live.Take(chatID, previewID)
	if !ok {
		return State{}
	}
	return p.close()
}

// State is what a preview showed when it ended.
type State struct {
	Live     bool     // a preview of this process, not one from before a restart
	MsgID    string   // the edited message, "" for none
	Shown    string   // its text
	ShownMD  string   // the Markdown the messages show, in order
	Blocks   bool     // edits were refused: BlockIDs follow MsgID
	BlockIDs []string // the paragraph messages after MsgID
}

// preview is one reply shown while it is written. Update never waits: it
// keeps the latest text and shows it when the interval allows, now or
// from a timer, so updates coalesce.
type preview struct {
	ps     *Previews
	chatID string
	jid    types.JID

	mu      sync.Mutex // held during sends, so close waits for one in flight
	ctx     context.Context
	pending string // the latest Markdown
	dirty   bool
	state   State
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
	if p.closed || (p.full && !p.dirty && !p.state.Blocks) {
		return nil
	}
	p.ctx, p.pending, p.dirty = ctx, text, true
	return p.flush()
}

func (p *preview) close() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
	st := p.state
	st.Live = true
	st.BlockIDs = append([]string(nil), st.BlockIDs...)
	return st
}

// flush shows the pending text if the interval allows it now, and
// otherwise schedules itself. p.mu is held.
func (p *preview) flush() error {
	if !p.dirty {
		return nil
	}
	now := p.ps.cfg.Now()
	if wait := p.next.Sub(now); wait > 0 {
		p.schedule(wait)
		return nil
	}
	p.dirty = false
	md := markdown.HoldOpen(p.pending)
	var sent bool
	var err error
	if p.state.Blocks {
		sent, err = p.showBlocks(md)
	} else {
		sent, err = p.showEdit(md)
	}
	if sent {
		p.next = now.Add(Interval)
	}
	if errors.Is(err, channels.ErrNotConnected) {
		// Reconnecting: show the latest text once it is back.
		p.dirty, p.next = true, now.Add(Interval)
		p.schedule(Interval)
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
	if text == "" || text == p.state.Shown {
		return false, nil
	}
	msg := &waE2E.Message{Conversation: proto.String(text)}
	if p.state.MsgID != "" {
		msg = p.ps.cfg.Client.BuildEdit(p.jid, p.state.MsgID, msg)
	}
	id, err := p.send(msg)
	switch {
	case err == nil && p.state.MsgID == "":
		p.state.MsgID = id
		p.setID(id)
	case err != nil && p.state.MsgID != "" && !errors.Is(err, channels.ErrNotConnected):
		p.ps.cfg.Log.Info("whatsapp: edit refused, previewing by paragraphs", "chat", p.chatID, "err", err)
		p.state.Blocks = true
		return p.showBlocks(md)
	case err != nil:
		return false, err
	}
	p.state.Shown = text
	if !full {
		p.state.ShownMD = md
	}
	return true, nil
}

// showBlocks sends the paragraphs of md completed since the last one
// shown, as new messages.
func (p *preview) showBlocks(md string) (bool, error) {
	if !strings.HasPrefix(md, p.state.ShownMD) {
		return false, nil
	}
	end := completedParagraphs(md, len(p.state.ShownMD))
	if end <= len(p.state.ShownMD) {
		return false, nil
	}
	for _, chunk := range waformat.Messages(md[len(p.state.ShownMD):end]) {
		id, err := p.send(&waE2E.Message{Conversation: proto.String(chunk)})
		if err != nil {
			return true, err
		}
		p.state.BlockIDs = append(p.state.BlockIDs, id)
	}
	p.state.ShownMD = md[:end]
	return true, nil
}

func (p *preview) send(msg *waE2E.Message) (string, error) {
	resp, err := p.ps.cfg.Client.SendMessage(p.ctx, p.jid, msg)
	if err != nil {
		return "", p.ps.cfg.SendError(p.chatID, err)
	}
	p.ps.cfg.Sent(resp.ID)
	return resp.ID, nil
}

func (p *preview) schedule(d time.Duration) {
	if p.stop != nil {
		return
	}
	p.stop = p.ps.cfg.After(d, p.fire)
}

func (p *preview) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = nil
	if p.closed || p.ctx.Err() != nil {
		return
	}
	if err := p.flush(); err != nil {
		p.ps.cfg.Log.Warn("whatsapp: reply preview ended", "chat", p.chatID, "err", err)
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
