package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	intakedom "github.com/omega-gateway/omega/domain/intake"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/intake"
)

type messageIn struct {
	SenderID   string `json:"sender_id"`
	SenderName string `json:"sender_name"`
	Text       string `json:"text"`
	// MessageID, when given, makes the post idempotent: posting the same
	// id again returns the same turn.
	MessageID string `json:"message_id"`
}

// TurnOut is the API's view of a turn.
type TurnOut struct {
	TurnID       string `json:"turn_id"`
	Status       string `json:"status"` // pending, or the completed turn's status
	Reply        string `json:"reply,omitempty"`
	Acknowledged bool   `json:"acknowledged,omitempty"`
	Duplicate    bool   `json:"duplicate,omitempty"`
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var in messageIn
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.SenderID) == "" || strings.TrimSpace(in.Text) == "" {
		writeError(w, http.StatusBadRequest, "sender_id and text are required")
		return
	}
	wait, err := s.waitParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	id, err := s.Receiver.Receive(r.Context(), channels.Incoming{
		Channel: Name, SenderID: in.SenderID, SenderName: in.SenderName, ChatID: in.SenderID,
		Text: in.Text, PlatformID: in.MessageID, Trusted: true,
	})
	dup := errors.Is(err, intake.ErrDuplicate)
	if errors.Is(err, intakedom.ErrInvalidMessage) {
		writeError(w, http.StatusBadRequest, invalidReason(err))
		return
	}
	if err != nil && !dup {
		s.Logger.Error("http channel: receive", "sender", in.SenderID, "err", err)
		writeError(w, http.StatusServiceUnavailable, "the message could not be recorded; try again")
		return
	}
	out, err := s.await(r.Context(), id, wait)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the message was recorded as turn "+id+" but its state could not be read")
		return
	}
	out.Duplicate = dup
	code := http.StatusOK
	if out.Status == "pending" {
		code = http.StatusAccepted
	}
	writeJSON(w, code, out)
}

func (s *Server) getTurn(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := uuid.Parse(id); err != nil {
		writeError(w, http.StatusBadRequest, "turn id must be a UUID")
		return
	}
	wait, err := s.waitParam(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	out, err := s.await(r.Context(), id, wait)
	if errors.Is(err, errNoTurn) {
		writeError(w, http.StatusNotFound, "no such turn")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "could not read the turn")
		return
	}
	code := http.StatusOK
	if out.Status == "pending" {
		code = http.StatusAccepted
	}
	writeJSON(w, code, out)
}

func (s *Server) waitParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("wait")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("wait must be a duration such as 30s (got %q)", v)
	}
	maxWait := s.MaxWait
	if maxWait == 0 {
		maxWait = 5 * time.Minute
	}
	return min(d, maxWait), nil
}

var errNoTurn = errors.New("no such turn")

// await reads the turn, waiting up to wait for it to complete.
func (s *Server) await(ctx context.Context, id string, wait time.Duration) (TurnOut, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	read := func() (TurnOut, bool, int64, error) { return s.read(context.WithoutCancel(ctx), id) }
	stream := domain.TurnStream(id)
	// A turn completed by this process is in the store's memory as soon
	// as it is committed: look there after each change to the turn's
	// stream rather than wait for the watcher, which sees it only once the
	// log is readable up to it. Watched before the first read, so that no
	// change after it goes unseen.
	cached, _ := s.Store.(eventstore.CachedLoader)
	var changes <-chan struct{}
	if cached != nil && wait > 0 {
		var stop func()
		changes, stop = cached.WatchCached(stream)
		defer stop()
	}
	out, done, first, err := read()
	if err != nil || done || wait == 0 {
		return out, err
	}
	// A turn that completed between the read and the registration is
	// either still ahead of the watcher or among those it saw complete
	// last: either way completed is closed.
	completed, forget := s.watch.watch(stream, first)
	defer forget()
	for {
		select {
		case <-completed:
			out, _, _, err = read()
			return out, err
		case <-changes:
			if evs, ok := cached.LoadCached(stream); ok && completes(evs) {
				if now, done, err := s.fold(id, evs); err == nil && done {
					return now, nil
				}
			}
		case <-ctx.Done():
			return out, nil
		}
	}
}

// read folds the turn's stream; it also returns the position of its first
// event, where a watcher can start following.
func (s *Server) read(ctx context.Context, id string) (TurnOut, bool, int64, error) {
	evs, err := s.Store.Load(ctx, domain.TurnStream(id), 1)
	if err != nil {
		return TurnOut{}, false, 0, err
	}
	if len(evs) == 0 {
		return TurnOut{}, false, 0, errNoTurn
	}
	out, done, err := s.fold(id, evs)
	return out, done, evs[0].Position, err
}

// completes reports whether a turn's events end with its completion.
func completes(evs []domain.Event) bool {
	return len(evs) > 0 && evs[len(evs)-1].Type == turn.TurnCompleted{}.EventType()
}

// answerEvents are the events an answer is made of; fold decodes no
// other (the turn's context, the largest, least of all: a request waiting
// for its reply folds the stream at least twice).
var answerEvents = map[string]bool{
	turn.AckSent{}.EventType():       true,
	turn.ReplyReady{}.EventType():    true, // ReplySent's text, when it is the reply as made
	turn.ReplySent{}.EventType():     true,
	turn.TurnCompleted{}.EventType(): true,
}

// fold turns a turn's events into the answer, done once it completed.
func (s *Server) fold(id string, evs []domain.Event) (TurnOut, bool, error) {
	var t turn.Turn
	for _, e := range evs {
		if !answerEvents[e.Type] {
			continue
		}
		p, err := s.Registry.Decode(e)
		if err != nil {
			return TurnOut{}, false, err
		}
		t.Apply(p, e.Version, e.RecordedAt)
	}
	out := TurnOut{TurnID: id, Status: "pending", Acknowledged: t.Acked}
	if t.Sent != nil {
		out.Reply = t.Sent.Text
	}
	if t.Completed != nil {
		out.Status = t.Completed.Status
		return out, true, nil
	}
	return out, false, nil
}
