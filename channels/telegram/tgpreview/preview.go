// Package tgpreview shows a Telegram reply while it is written: as a
// message draft where the Bot API has sendMessageDraft, otherwise as one
// message edited as the reply grows, paced so that the final reply never
// waits for the preview.
package tgpreview

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"
	tu "github.com/mymmrac/telego/telegoutil"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
	"github.com/omega-gateway/omega/channels/telegram/botapi"
	"github.com/omega-gateway/omega/channels/telegram/tgtext"
)

const (
	// previewInterval spaces the updates of one reply's preview: Telegram
	// allows about one message a second per chat, edits included, and a
	// faster preview only flickers.
	previewInterval = time.Second
	// previewCallTimeout bounds one preview call: a late preview update
	// is worth less than the next one.
	previewCallTimeout = 10 * time.Second
)

// Config is what previews need of the channel. Every field is required.
type Config struct {
	Bot   *telego.Bot
	Pacer *botapi.Pacer
	Log   *slog.Logger
	Now   func() time.Time
	// After runs f once d has passed; stop cancels it and reports whether
	// it had not run yet.
	After func(d time.Duration, f func()) (stop func() bool)
	// Redact removes the bot token from an error.
	Redact func(error) error
	// Classify maps a Bot API refusal to the channels error classes.
	Classify func(error) error
}

// Previews holds the live preview of each chat.
type Previews struct {
	cfg       Config
	live      channels.LivePreviews[*preview]
	draftsOff atomic.Bool // the Bot API has no sendMessageDraft
	draftSeq  atomic.Int64
}

// New validates cfg and returns a set of previews with none live.
func New(cfg Config) (*Previews, error) {
	if cfg.Bot == nil || cfg.Pacer == nil || cfg.Log == nil || cfg.Now == nil || cfg.After == nil ||
		cfg.Redact == nil || cfg.Classify == nil {
		return nil, errors.New("telegram previews: bot, pacer, logger, clock, timer, redact and classify are required")
	}
	return &Previews{cfg: cfg}, nil
}

// Start begins a preview of a reply in the private chat chatID (whose
// numeric id is id), ending the chat's previous one.
func (ps *Previews) Start(ctx context.Context, chatID string, id int64) channels.Preview {
	p := &preview{ps: ps, chatID: chatID, id: id, ctx: ctx, draft: !ps.draftsOff.Load()}
	if p.draft {
		p.draftID = int(ps.draftSeq.Add(1))
	}
	if old, ok := ps.live.Replace(chatID, p); ok {
		old.close()
	}
	return p
}

// End stops the chat's live preview if it is the one previewID names
// (any, for an empty previewID: the caller may have asked for the id
// just before the first message went out) and returns its last state.
func (ps *Previews) End(chatID, previewID string) State {
	p, ok := ps.live.Take(chatID, previewID)
	if !ok {
		return State{}
	}
	return p.close()
}

// State is what a preview showed when it ended.
type State struct {
	MsgID int64  // the preview message, 0 for none (a draft)
	Shown string // its HTML
	Plain bool   // it was shown as plain text
}

// preview is one reply shown while it is written. Update never waits: it
// keeps the latest text and shows it when the preview's interval and the
// chat's pacing allow, now or from a timer, so updates coalesce.
type preview struct {
	ps      *Previews
	chatID  string
	id      int64
	draftID int
	msgID   atomic.Int64 // the visible preview message, 0 until sent

	mu      sync.Mutex // held during calls, so close waits for one in flight
	ctx     context.Context
	draft   bool        // shown as a draft, not a message
	plain   bool        // Telegram rejected the HTML: show plain text
	pending string      // the latest Markdown
	dirty   bool        // pending is not shown yet
	shown   string      // the HTML the preview shows
	full    bool        // shown is a whole message: more text changes nothing
	next    time.Time   // no call before then (interval, flood control)
	stop    func() bool // cancels the scheduled flush; nil when none
	closed  bool
}

// ID implements channels.Preview.
func (p *preview) ID() string {
	if id := p.msgID.Load(); id != 0 {
		return strconv.FormatInt(id, 10)
	}
	return ""
}

// Update implements channels.Preview.
func (p *preview) Update(ctx context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || (p.full && !p.dirty) {
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
	return State{MsgID: p.msgID.Load(), Shown: p.shown, Plain: p.plain}
}

// flush shows the pending text if the interval and the pacer allow it
// now, and otherwise schedules itself. p.mu is held.
func (p *preview) flush() error {
	if !p.dirty {
		return nil
	}
	now := p.ps.cfg.Now()
	if wait := p.next.Sub(now); wait > 0 {
		p.schedule(wait)
		return nil
	}
	html, full := Chunk(p.pending)
	p.full = full
	if html == "" || html == p.shown {
		p.dirty = false
		return nil
	}
	if ok, wait := p.ps.cfg.Pacer.TryPreview(p.chatID, now); !ok {
		p.schedule(wait)
		return nil
	}
	p.dirty = false
	p.next = now.Add(previewInterval)
	err := p.show(html)
	if err == nil {
		p.shown = html
		return nil
	}
	return p.failed(now, err)
}

// failed handles a preview call's error: flood control and transient
// failures retry later with the latest text, a refusal ends the preview.
func (p *preview) failed(now time.Time, err error) error {
	p.dirty = true
	if wait, limited := botapi.RetryAfter(err); limited {
		p.ps.cfg.Log.Warn("telegram flood control on reply preview, waiting", "chat", p.chatID, "retry_after", wait)
		p.next = now.Add(wait)
		p.schedule(wait)
		return nil
	}
	var apiErr *ta.Error
	if !errors.As(err, &apiErr) || apiErr.ErrorCode >= http.StatusInternalServerError {
		p.ps.cfg.Log.Warn("telegram reply preview failed, retrying", "chat", p.chatID, "err", p.ps.cfg.Redact(err))
		p.schedule(previewInterval)
		return nil
	}
	p.closed = true
	return p.ps.cfg.Classify(err)
}

func (p *preview) schedule(d time.Duration) {
	if p.stop != nil {
		return
	}
	p.stop = p.ps.cfg.After(d, p.fire)
}

// fire is the scheduled flush.
func (p *preview) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = nil
	if p.closed || p.ctx.Err() != nil {
		return
	}
	if err := p.flush(); err != nil {
		p.ps.cfg.Log.Warn("telegram reply preview ended", "chat", p.chatID, "err", err)
	}
}

// Chunk is what a preview shows of the Markdown md: the first message's
// worth of its HTML, as the final reply's first chunk will be, so a long
// reply never shows a second message before it is final. full reports
// that more text no longer changes it (the chunker cuts greedily), so it
// need not be rendered again.
func Chunk(md string) (html string, full bool) {
	chunks := tgtext.Chunk(tgtext.MarkdownToHTML(markdown.HoldOpen(md)), tgtext.MaxMessageLen)
	if len(chunks) == 0 {
		return "", false
	}
	return chunks[0], len(chunks) > 1
}

// show makes the preview show html. p.mu is held.
func (p *preview) show(html string) error {
	ctx, cancel := context.WithTimeout(p.ctx, previewCallTimeout)
	defer cancel()
	if p.draft {
		err := p.call(html, func(text, mode string) error {
			return p.ps.cfg.Bot.SendMessageDraft(ctx, &telego.SendMessageDraftParams{
				ChatID: p.id, DraftID: p.draftID, Text: text, ParseMode: mode,
			})
		})
		if !botapi.DraftsUnavailable(err) {
			return err
		}
		p.ps.cfg.Log.Info("telegram: no message drafts on this Bot API; previews edit a message", "err", p.ps.cfg.Redact(err))
		p.ps.draftsOff.Store(true)
		p.draft = false
	}
	if p.msgID.Load() == 0 {
		return p.sendFirst(ctx, html)
	}
	err := p.call(html, func(text, mode string) error {
		_, err := p.ps.cfg.Bot.EditMessageText(ctx, &telego.EditMessageTextParams{
			ChatID: tu.ID(p.id), MessageID: int(p.msgID.Load()), Text: text, ParseMode: mode,
		})
		return err
	})
	switch {
	case botapi.IsNotModified(err):
		return nil
	case botapi.IsMessageGone(err):
		// The person deleted the preview: go on in a new message.
		p.msgID.Store(0)
		return p.sendFirst(ctx, html)
	}
	return err
}

func (p *preview) sendFirst(ctx context.Context, html string) error {
	return p.call(html, func(text, mode string) error {
		msg, err := p.ps.cfg.Bot.SendMessage(ctx, &telego.SendMessageParams{ChatID: tu.ID(p.id), Text: text, ParseMode: mode})
		if err == nil {
			p.msgID.Store(int64(msg.MessageID))
		}
		return err
	})
}

// call sends html with send, as plain text once Telegram rejected the
// preview's HTML.
func (p *preview) call(html string, send func(text, mode string) error) error {
	if !p.plain {
		err := send(html, telego.ModeHTML)
		if !botapi.IsEntityError(err) {
			return err
		}
		p.ps.cfg.Log.Warn("telegram rejected preview formatting, previewing plain text", "chat", p.chatID, "err", err)
		p.plain = true
	}
	return send(tgtext.HTMLToPlain(html), "")
}
