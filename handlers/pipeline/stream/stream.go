// Package stream shows a turn's reply while the provider writes it: the
// text released past any marker (markers.Release) goes to the chat's
// preview and to the turn's watchers, with a line saying what the agent
// does now; and while a call runs, the typing indicator and the "still
// working" nudges. It records only through the port it is given.
package stream

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

// Live shows streamed replies to whoever watches a turn, such as the HTTP
// API's event streams (live.Hub). Publish must not block.
type Live interface {
	Publish(turnID, text, activity string)
	End(turnID string)
}

// Options are what one reply's stream shows to and records with.
type Options struct {
	TurnID   string
	Language string
	// Preview is the chat's preview (nil: none in this chat); PreviewID
	// is the one a turn resumed after a crash recorded.
	Preview   channels.Preview
	PreviewID string
	Live      Live // nil: no watchers
	// StartedAt is when the turn started (zero: when the text shows).
	StartedAt time.Time
	Now       func() time.Time
	// Record puts on record that the reply began to show in the chat's
	// preview; Defer adds it to the turn's next record instead when it
	// showed only off the chat (to watchers, or in a preview that leaves
	// nothing there, channels.InChat): a turn resumed after a crash has
	// nothing to replace, so it needs no write of its own. Both run on the stream's worker, never at the same time
	// as the caller's own use of the turn (the caller waits for Stop).
	Record func(ctx context.Context, e turn.ReplyStreamStarted) error
	Defer  func(e turn.ReplyStreamStarted)
	Logger *slog.Logger
}

// Reply shows one provider call's reply while it is written: the
// provider's goroutine feeds OnDelta, which only keeps the latest text; a
// worker shows it in the chat's preview and to the turn's watchers and
// records when it first showed, so a slow platform never slows the
// model's stream.
type Reply struct {
	o       Options
	release markers.Release // the provider's goroutine only

	mu             sync.Mutex
	text, activity string
	written        bool // text came before
	afterTool      bool // a tool was used since the last text
	wake           chan struct{}
	stopc, done    chan struct{}
	shown          atomic.Bool // the preview showed something

	// The worker's own.
	textNoted bool
	idNoted   string
}

// Start checks the options (Record, Defer, Now and Logger are required)
// and starts the worker; Stop ends it.
func Start(ctx context.Context, o Options) (*Reply, error) {
	if o.Record == nil || o.Defer == nil || o.Now == nil || o.Logger == nil {
		return nil, errors.New("stream: needs a recorder, a clock and a logger")
	}
	r := &Reply{o: o, idNoted: o.PreviewID,
		wake: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{})}
	go r.run(ctx)
	return r, nil
}

// Shown reports whether the chat's preview showed some of the reply.
func (r *Reply) Shown() bool { return r.shown.Load() }

// OnDelta takes one piece of the reply from the provider.
func (r *Reply) OnDelta(dl providers.Delta) {
	r.mu.Lock()
	changed := false
	if dl.Text != "" {
		piece := dl.Text
		if r.afterTool && r.written && !strings.HasPrefix(piece, "\n") {
			// The agent's next message after a tool starts a paragraph
			// of its own, not glued to the last sentence.
			piece = "\n\n" + piece
		}
		r.afterTool, r.written = false, true
		if text, grew := r.release.Write(piece); grew {
			r.text, r.activity, changed = text, "", true
		}
	}
	if dl.Tool != "" {
		r.activity, changed = i18n.Activity(r.o.Language, dl.Tool, dl.ToolTarget), true
		r.afterTool = true
	}
	r.mu.Unlock()
	if changed {
		select {
		case r.wake <- struct{}{}:
		default: // the worker will read the latest text anyway
		}
	}
}

// run shows the latest text whenever it changed, until Stop.
func (r *Reply) run(ctx context.Context) {
	defer close(r.done)
	for {
		select {
		case <-r.stopc:
			return
		case <-r.wake:
		}
		r.mu.Lock()
		text, activity := r.text, r.activity
		r.mu.Unlock()
		if r.o.Live != nil {
			r.o.Live.Publish(r.o.TurnID, text, activity)
		}
		if r.o.Preview != nil {
			if err := r.show(ctx, text, activity); err != nil {
				r.o.Logger.Warn("reply preview broken; the reply is sent whole", "err", err)
				r.note(ctx, text != "")
				r.o.Preview = nil
				continue
			}
		}
		r.note(ctx, text != "")
	}
}

// workPreview is a preview that shows the agent's activity its own way
// (the terminal leaves it out of the printed reply).
type workPreview interface {
	ShowWork(ctx context.Context, text, activity string) error
}

// show updates the chat's preview.
func (r *Reply) show(ctx context.Context, text, activity string) error {
	if w, ok := r.o.Preview.(workPreview); ok {
		if err := w.ShowWork(ctx, text, activity); err != nil {
			return err
		}
		if text != "" {
			r.shown.Store(true)
		}
		return nil
	}
	if err := r.o.Preview.Update(ctx, previewText(text, activity)); err != nil {
		return err
	}
	r.shown.Store(true)
	return nil
}

// previewText is what the chat's preview shows: the reply so far and,
// below it, what the agent is doing now.
func previewText(text, activity string) string {
	if text == "" || activity == "" {
		return text + activity
	}
	return text + "\n\n" + activity
}

// note records that the reply began to show, and the preview message's
// id once the platform gave one: a turn resumed after a crash replaces
// that message rather than sending a second one. What showed only to
// watchers goes with the turn's next record.
func (r *Reply) note(ctx context.Context, hasText bool) {
	var id string
	if r.o.Preview != nil {
		id = r.o.Preview.ID()
	}
	first := hasText && !r.textNoted
	if !first && (id == "" || id == r.idNoted) {
		return
	}
	e := turn.ReplyStreamStarted{PreviewID: id}
	if first {
		r.textNoted = true
		since := r.o.StartedAt
		if since.IsZero() {
			since = r.o.Now()
		}
		e.VisibleMs = max(r.o.Now().Sub(since).Milliseconds(), 1)
	}
	r.idNoted = id
	if !channels.InChat(r.o.Preview) {
		r.o.Defer(e)
		return
	}
	if err := r.o.Record(ctx, e); err != nil {
		// It stays pending and is recorded with the reply.
		r.o.Logger.Warn("reply preview not recorded yet", "err", err)
	}
}

// Stop ends the worker and the turn's live view; the turn's state is the
// caller's again once it returns.
func (r *Reply) Stop() {
	close(r.stopc)
	<-r.done
	if r.o.Live != nil {
		r.o.Live.End(r.o.TurnID)
	}
}
