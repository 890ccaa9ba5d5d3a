package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/internal/live"
)

// The HTTP channel previews nothing itself: its replies are read back,
// and a running turn's text is served live by StreamTurn from the hub
// the pipeline feeds.
var _ channels.Previewer = (*Server)(nil)

type noPreview struct{}

func (noPreview) Update(context.Context, string) error { return nil }
func (noPreview) ID() string                           { return "" }
func (noPreview) OffChat() bool                        { return true }

// StartPreview accepts every chat: the reply shows on the turn's stream.
func (s *Server) StartPreview(context.Context, string) (channels.Preview, error) {
	return noPreview{}, nil
}

// FinishPreview records nothing more than SendText does.
func (s *Server) FinishPreview(ctx context.Context, chatID, _, text string) (channels.SendResult, error) {
	return s.SendText(ctx, chatID, text)
}

// streamKeepAlive is how often an idle event stream sends a comment, so
// that proxies do not take it for dead.
const streamKeepAlive = 15 * time.Second

// streamEventGap paces a stream's text events: each carries the whole
// text so far, so a change that follows the last event sooner waits and
// is sent with the changes after it.
const streamEventGap = 50 * time.Millisecond

// liveEvent is a "text" event: the visible reply so far and what the
// agent is doing.
type liveEvent struct {
	Text     string `json:"text"`
	Activity string `json:"activity,omitempty"`
}

// StreamTurn serves GET /api/turns/{id}/stream as Server-Sent Events: a
// "text" event with the reply visible so far, one per change after it
// (the latest text only: a slow client skips what it could not take),
// then a "final" event with the turn as GET /api/turns/{id} shows it
// once the turn completed; a completed turn gets the final at once. The
// caller authenticates.
func (s *Server) StreamTurn(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		writeError(w, http.StatusBadRequest, "turn id must be a UUID")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	var sub *live.Sub
	if s.Live != nil {
		// Before reading the turn: no text shown in between is missed.
		sub = s.Live.Subscribe(id)
		defer sub.Close()
	}
	ctx := r.Context()
	out, done, _, err := s.read(ctx, id)
	switch {
	case errors.Is(err, errNoTurn):
		writeError(w, http.StatusNotFound, "no such turn")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "could not read the turn")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if done {
		writeEvent(w, flusher, "final", out)
		return
	}
	s.follow(ctx, w, flusher, id, sub)
}

// follow streams a running turn's text until its final reply.
func (s *Server) follow(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, id string, sub *live.Sub) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type final struct {
		out TurnOut
		err error
	}
	finals := make(chan final, 1)
	go func() {
		out, err := s.await(ctx, id, 24*time.Hour)
		finals <- final{out, err}
	}()
	var wake <-chan struct{}
	var last live.Snapshot
	var sent time.Time
	var later <-chan time.Time // a change waits for streamEventGap
	if sub != nil {
		wake = sub.C()
		last = s.sendSnapshot(w, flusher, sub, last)
		sent = time.Now()
		if last == (live.Snapshot{}) {
			sent = time.Time{} // nothing shown yet: the first text goes at once
		}
	}
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-wake:
			if gap := streamEventGap - time.Since(sent); gap > 0 {
				if later == nil {
					later = time.After(gap)
				}
				continue
			}
			last, sent = s.sendSnapshot(w, flusher, sub, last), time.Now()
		case <-later:
			later = nil
			last, sent = s.sendSnapshot(w, flusher, sub, last), time.Now()
		case f := <-finals:
			if f.err != nil || f.out.Status == "pending" {
				return // the client left, or the turn cannot be read
			}
			writeEvent(w, flusher, "final", f.out)
			return
		case <-keepAlive.C:
			_, _ = fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		case <-s.streamsStopped():
			return
		case <-ctx.Done():
			return
		}
	}
}

// sendSnapshot sends the turn's text when it changed since last.
func (s *Server) sendSnapshot(w http.ResponseWriter, flusher http.Flusher, sub *live.Sub, last live.Snapshot) live.Snapshot {
	snap := sub.Snapshot()
	if snap.Text == last.Text && snap.Activity == last.Activity || snap.Text == "" && snap.Activity == "" {
		return last
	}
	writeEvent(w, flusher, "text", liveEvent{Text: snap.Text, Activity: snap.Activity})
	return snap
}

// writeEvent writes one Server-Sent Event with a JSON payload, which
// never holds a raw newline.
func writeEvent(w http.ResponseWriter, flusher http.Flusher, name string, v any) {
	b, _ := json.Marshal(v)
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	flusher.Flush()
}

// streamsStopped is closed when the server shuts down: the event streams
// end rather than hold the shutdown until their turns complete.
func (s *Server) streamsStopped() <-chan struct{} { return s.stopChan() }

func (s *Server) stopChan() chan struct{} {
	s.stopOnce.Do(func() { s.stopStreams = make(chan struct{}) })
	return s.stopStreams
}

func (s *Server) stopStreaming() {
	c := s.stopChan()
	s.closeOnce.Do(func() { close(c) })
}
