package pipeline

import (
	"context"
	"errors"
	"log/slog"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/stream"
	"github.com/omega-gateway/omega/providers"
)

// LiveReplies shows streamed replies to whoever watches a turn, such as
// the HTTP API's event streams (live.Hub). Publish must not block.
type LiveReplies = stream.Live

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
	o := stream.Options{TurnID: st.ID, Language: d.language(st, profile), PreviewID: st.Preview.ID,
		Live: d.Live, StartedAt: st.StartedAt, Now: d.now, Logger: log,
		Record: func(ctx context.Context, e turn.ReplyStreamStarted) error { return d.record(ctx, st, e) },
		Defer:  func(e turn.ReplyStreamStarted) { st.add(e) },
	}
	if st.Preview.ID == "" {
		// A preview left by an attempt before a crash is not doubled: the
		// final reply replaces it, and this attempt shows only to watchers.
		o.Preview = d.startPreview(ctx, st, log)
	}
	rs, err := stream.Start(ctx, o)
	if err != nil {
		return providers.Response{}, 0, err
	}
	// Also on a panic: the worker writes to st and the hub holds the turn.
	defer rs.Stop()
	// The nudges stay for a chat that sees nothing while the reply is
	// written: the preview says more, and sooner.
	stopStatus := d.statusUpdates(ctx, st, profile, rs.Shown, log)
	resp, err := s.Stream(ctx, req, rs.OnDelta)
	return resp, stopStatus(), err
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

// typing keeps the platform's typing indicator on until stop is called.
func (d *Driver) typing(ctx context.Context, st *turnState, log *slog.Logger) (stop func()) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return func() {}
	}
	return stream.Typing(ctx, ch, st.Received.ChatID, d.Config.TypingEvery, log)
}

// statusUpdates sends localized "still working" messages while a provider
// call runs long (see stream.Nudges); stop returns how many were sent.
func (d *Driver) statusUpdates(ctx context.Context, st *turnState, profile sender.SenderProfile, quiet func() bool, log *slog.Logger) (stop func() int) {
	if d.Config.StatusFirst <= 0 {
		return func() int { return 0 }
	}
	first, still := i18n.StatusMessages(d.language(st, profile))
	return stream.Nudges{First: d.Config.StatusFirst, Every: d.Config.StatusEvery, FirstText: first, StillText: still,
		Quiet: quiet, Logger: log,
		Send: func(ctx context.Context, text string) error {
			_, err := d.send(ctx, st, text)
			return err
		},
	}.Start(ctx)
}

// deliver sends the turn's final text: in place of its preview when one
// showed, else as a new message.
func (d *Driver) deliver(ctx context.Context, st *turnState, text string) (channels.SendResult, error) {
	return d.chat(st).Final(ctx, st.Preview.Shown, st.Preview.ID, text)
}
