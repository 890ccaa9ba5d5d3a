package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

// LiveReplies shows streamed replies to whoever watches a turn, such as
// the HTTP API's event streams (live.Hub). Publish must not block.
type LiveReplies interface {
	Publish(turnID, text, activity string)
	End(turnID string)
}

// ask calls the provider: streamed where it can stream and streaming is
// on, so that the reply shows while it is written, else as a whole. It
// returns how many "still working" messages were sent meanwhile.
func (d *Driver) ask(ctx context.Context, st *turnState, req providers.Request, profile sender.SenderProfile, log *slog.Logger) (providers.Response, int, error) {
	s, ok := d.Provider.(providers.Streamer)
	if !ok || !d.Config.Streaming {
		stopStatus := d.statusUpdates(ctx, st, profile, nil, log)
		resp, err := d.Provider.Complete(ctx, req)
		return resp, stopStatus(), err
	}
	rs := d.startStream(ctx, st, profile, log)
	// Also on a panic: the worker writes to st and the hub holds the turn.
	defer rs.stop()
	// The nudges stay for a chat that sees nothing while the reply is
	// written: the preview says more, and sooner.
	stopStatus := d.statusUpdates(ctx, st, profile, rs.shown.Load, log)
	resp, err := s.Stream(ctx, req, rs.onDelta)
	return resp, stopStatus(), err
}

// replyStream shows one provider call's reply while it is written: the
// provider's goroutine feeds onDelta, which only keeps the latest text;
// a worker shows it in the chat's preview and to the turn's watchers and
// records when it first showed, so a slow platform never slows the
// model's stream.
type replyStream struct {
	d       *Driver
	st      *turnState
	log     *slog.Logger
	lang    string
	preview channels.Preview // nil: none in this chat
	release markers.Release  // the provider's goroutine only

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

func (d *Driver) startStream(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) *replyStream {
	rs := &replyStream{d: d, st: st, log: log, lang: d.language(st, profile),
		wake: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{})}
	rs.idNoted = st.Preview.ID
	if st.Preview.ID == "" {
		// A preview left by an attempt before a crash is not doubled: the
		// final reply replaces it, and this attempt shows only to watchers.
		rs.preview = d.startPreview(ctx, st, log)
	}
	go rs.run(ctx)
	return rs
}

// startPreview begins the chat's preview, if its channel can show one.
func (d *Driver) startPreview(ctx context.Context, st *turnState, log *slog.Logger) channels.Preview {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return nil
	}
	pv, ok := ch.(channels.Previewer)
	if !ok {
		return nil
	}
	p, err := pv.StartPreview(ctx, st.Received.ChatID)
	if err != nil {
		if !errors.Is(err, channels.ErrNoPreview) {
			log.Warn("reply preview not started; the reply is sent whole", "err", err)
		}
		return nil
	}
	return p
}

// onDelta takes one piece of the reply from the provider.
func (rs *replyStream) onDelta(dl providers.Delta) {
	rs.mu.Lock()
	changed := false
	if dl.Text != "" {
		piece := dl.Text
		if rs.afterTool && rs.written && !strings.HasPrefix(piece, "\n") {
			// The agent's next message after a tool starts a paragraph
			// of its own, not glued to the last sentence.
			piece = "\n\n" + piece
		}
		rs.afterTool, rs.written = false, true
		if text, grew := rs.release.Write(piece); grew {
			rs.text, rs.activity, changed = text, "", true
		}
	}
	if dl.Tool != "" {
		rs.activity, changed = i18n.Activity(rs.lang, dl.Tool, dl.ToolTarget), true
		rs.afterTool = true
	}
	rs.mu.Unlock()
	if changed {
		select {
		case rs.wake <- struct{}{}:
		default: // the worker will read the latest text anyway
		}
	}
}

// run shows the latest text whenever it changed, until stop.
func (rs *replyStream) run(ctx context.Context) {
	defer close(rs.done)
	for {
		select {
		case <-rs.stopc:
			return
		case <-rs.wake:
		}
		rs.mu.Lock()
		text, activity := rs.text, rs.activity
		rs.mu.Unlock()
		if rs.d.Live != nil {
			rs.d.Live.Publish(rs.st.ID, text, activity)
		}
		if rs.preview != nil {
			if err := rs.show(ctx, text, activity); err != nil {
				rs.log.Warn("reply preview broken; the reply is sent whole", "err", err)
				rs.note(ctx, text != "")
				rs.preview = nil
				continue
			}
		}
		rs.note(ctx, text != "")
	}
}

// workPreview is a preview that shows the agent's activity its own way
// (the terminal leaves it out of the printed reply).
type workPreview interface {
	ShowWork(ctx context.Context, text, activity string) error
}

// show updates the chat's preview.
func (rs *replyStream) show(ctx context.Context, text, activity string) error {
	if w, ok := rs.preview.(workPreview); ok {
		if err := w.ShowWork(ctx, text, activity); err != nil {
			return err
		}
		if text != "" {
			rs.shown.Store(true)
		}
		return nil
	}
	if err := rs.preview.Update(ctx, previewText(text, activity)); err != nil {
		return err
	}
	rs.shown.Store(true)
	return nil
}

// previewText is what the chat's preview shows: the reply so far and,
// below it, what the agent is doing now.
func previewText(text, activity string) string {
	switch {
	case activity == "":
		return text
	case text == "":
		return activity
	}
	return text + "\n\n" + activity
}

// note records that the reply began to show, and the preview message's
// id once the platform gave one: a turn resumed after a crash replaces
// that message rather than sending a second one.
func (rs *replyStream) note(ctx context.Context, hasText bool) {
	var id string
	if rs.preview != nil {
		id = rs.preview.ID()
	}
	first := hasText && !rs.textNoted
	if !first && (id == "" || id == rs.idNoted) {
		return
	}
	e := turn.ReplyStreamStarted{PreviewID: id}
	if first {
		rs.textNoted = true
		since := rs.st.StartedAt
		if since.IsZero() {
			since = rs.d.now()
		}
		e.VisibleMs = max(rs.d.now().Sub(since).Milliseconds(), 1)
	}
	rs.idNoted = id
	if err := rs.d.record(ctx, rs.st, e); err != nil {
		// It stays pending and is recorded with the reply.
		rs.log.Warn("reply preview not recorded yet", "err", err)
	}
}

// stop ends the worker and the turn's live view; the turn's state is the
// caller's again once it returns.
func (rs *replyStream) stop() {
	close(rs.stopc)
	<-rs.done
	if rs.d.Live != nil {
		rs.d.Live.End(rs.st.ID)
	}
}

// deliver sends the turn's final text: in place of its preview when one
// showed, else as a new message.
func (d *Driver) deliver(ctx context.Context, st *turnState, text string) (channels.SendResult, error) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	pv, previews := ch.(channels.Previewer)
	if !ok || !previews || !st.Preview.Shown {
		return d.send(ctx, st, text)
	}
	return d.retry(ctx, func(ctx context.Context) (channels.SendResult, error) {
		return pv.FinishPreview(ctx, st.Received.ChatID, st.Preview.ID, text)
	})
}
