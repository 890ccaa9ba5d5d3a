// Package api is omega's HTTP channel: the owner's programs post messages
// and webhooks to it. Its senders are trusted (local access or the bearer
// token is their authentication), and replies are read back from the
// event log rather than pushed.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	intakedom "github.com/omega-gateway/omega/domain/intake"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/live"
)

// Name is the channel name of messages posted to the API.
const Name = "http"

// Receiver records incoming messages as turns.
type Receiver interface {
	Receive(ctx context.Context, in channels.Incoming) (string, error)
}

// Server is the HTTP channel.
type Server struct {
	Addr     string
	Token    string // bearer token; empty allows only loopback clients
	Receiver Receiver
	Store    eventstore.Store
	Registry *domain.Registry
	Channels pipeline.ChannelSet
	// Audit answers GET /api/audit; nil leaves the endpoint out.
	Audit AuditQueries
	// Ops serves /metrics and /readyz; nil leaves them out.
	Ops Ops
	// UI serves /ui/ with its own authentication (a cookie besides the
	// bearer token); nil leaves it out.
	UI http.Handler
	// DefaultSenders names, per channel, who webhook AI-mode messages are
	// from when the request names nobody (the first allowlisted user).
	DefaultSenders map[string]string
	Logger         *slog.Logger
	// MaxWait caps ?wait= (default 5m).
	MaxWait time.Duration
	// MaxBody bounds a request body (default 1 MiB); larger gets 413.
	MaxBody int64
	// Server timeouts (defaults 10s, 30s, 2m): a client that trickles
	// its headers or body, or idles, is cut off rather than holding a
	// connection for ever. There is no write timeout: ?wait= long-polls.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration

	// Live is the hub the pipeline shows streamed replies on; nil: the
	// turn stream has only the final reply.
	Live *live.Hub

	srv   *http.Server
	ln    net.Listener
	watch turnWatcher

	stopStreams         chan struct{}
	stopOnce, closeOnce sync.Once
}

var _ channels.Channel = (*Server)(nil)

func (s *Server) Name() string { return Name }

// Handler returns the API's routes behind authentication. A path that is
// not in canonical form (dot segments, doubled slashes) is answered 404
// rather than redirected: no route has such a name.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("POST /api/messages", s.auth(http.HandlerFunc(s.postMessage)))
	mux.Handle("GET /api/turns/{id}", s.auth(http.HandlerFunc(s.getTurn)))
	mux.Handle("GET /api/turns/{id}/stream", s.auth(http.HandlerFunc(s.StreamTurn)))
	mux.Handle("POST /api/webhook", s.auth(http.HandlerFunc(s.webhook)))
	if s.Ops != nil {
		mux.Handle("GET /metrics", s.auth(s.Ops.Handler()))
		mux.Handle("GET /readyz", s.Ops.Ready())
	}
	if s.UI != nil {
		mux.Handle("/ui/", s.UI)
	}
	if s.Audit != nil {
		mux.Handle("GET /api/audit", s.auth(http.HandlerFunc(s.getAudit)))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonical(r.URL.Path) {
			writeError(w, http.StatusNotFound, "no such endpoint")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// canonical reports whether p is an absolute path without dot segments or
// doubled slashes. A trailing slash is kept: it names a directory-like
// route such as the web UI's front door, /ui/.
func canonical(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// httpServer returns the server with its timeouts.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       orDefault(s.ReadTimeout, 30*time.Second),
		IdleTimeout:       orDefault(s.IdleTimeout, 2*time.Minute),
	}
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Listen binds the address; Start serves on it. Split so that callers
// (and tests with port 0) learn the address before serving.
func (s *Server) Listen() (net.Addr, error) {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("http channel: listen on %s: %w", s.Addr, err)
	}
	s.ln = ln
	return ln.Addr(), nil
}

// Start serves until ctx ends. The deliver function is not used: the API
// records turns itself so that it can answer with their ids.
func (s *Server) Start(ctx context.Context, _ channels.Deliver) error {
	if s.ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	s.watch.mu.Lock()
	s.watch.store, s.watch.logger, s.watch.ctx = s.Store, s.Logger, ctx
	s.watch.mu.Unlock()
	s.srv = s.httpServer()
	s.srv.RegisterOnShutdown(s.stopStreaming)
	if sd, ok := s.UI.(interface{ Shutdown() }); ok {
		s.srv.RegisterOnShutdown(sd.Shutdown) // its live streams never end by themselves
	}
	s.Logger.Info("http channel listening", "addr", s.ln.Addr().String(), "token_required", s.Token != "")
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("http channel: %w", err)
	}
}

// Stop shuts the server down, letting running requests finish.
func (s *Server) Stop(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}

// SendText has nothing to push: the client reads the reply from the log
// (the recorded ReplySent holds the text).
func (s *Server) SendText(context.Context, string, string) (channels.SendResult, error) {
	return channels.SendResult{Chunks: 1}, nil
}

func (s *Server) SendTyping(context.Context, string) error { return nil }

func (s *Server) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return fmt.Errorf("%w: the http channel cannot push photos; they stay in the workspace", channels.ErrRejected)
}

func (s *Server) FormatHint() string {
	return "Platform: HTTP API. Replies are read by programs and people alike: plain Markdown is fine."
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token == "" {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				writeError(w, http.StatusForbidden, "this server has no API token, so it only answers local clients")
				return
			}
		} else {
			got, ok := bearer(r.Header.Get("Authorization"))
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="omega"`)
				writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, orDefault(s.MaxBody, 1<<20))
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization header; the scheme name is
// case-insensitive (RFC 7235).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

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

// fold turns a turn's events into the answer, done once it completed.
func (s *Server) fold(id string, evs []domain.Event) (TurnOut, bool, error) {
	var t turn.Turn
	for _, e := range evs {
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

type webhookIn struct {
	Mode     string `json:"mode"` // direct or ai
	Channel  string `json:"channel"`
	ChatID   string `json:"chat_id"`
	SenderID string `json:"sender_id"`
	Text     string `json:"text"`
}

// webhook: direct mode sends the text to a chat now; AI mode runs it as a
// turn whose reply goes to that channel.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	var in webhookIn
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Text) == "" || in.Channel == "" {
		writeError(w, http.StatusBadRequest, "channel and text are required")
		return
	}
	ch, ok := s.Channels.Channel(in.Channel)
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("channel %q is not running in this omega", in.Channel))
		return
	}
	switch in.Mode {
	case "direct", "":
		s.webhookDirect(w, r, ch, in)
	case "ai":
		s.webhookAI(w, r, in)
	default:
		writeError(w, http.StatusBadRequest, `mode must be "direct" or "ai"`)
	}
}

func (s *Server) webhookDirect(w http.ResponseWriter, r *http.Request, ch channels.Channel, in webhookIn) {
	if in.ChatID == "" {
		writeError(w, http.StatusBadRequest, "chat_id is required in direct mode")
		return
	}
	res, sendErr := ch.SendText(r.Context(), in.ChatID, in.Text)
	rec := system.WebhookDelivered{Channel: in.Channel, ChatID: in.ChatID, Text: in.Text, Chunks: res.Chunks}
	if sendErr != nil {
		rec.Error = sendErr.Error()
	}
	id := uuid.NewString()
	ev, err := domain.NewEventFrom(rec, domain.Metadata{CorrelationID: id, Channel: in.Channel})
	if err == nil {
		_, err = s.Store.Append(context.WithoutCancel(r.Context()), system.WebhookStream(id), eventstore.NoStream, ev)
	}
	if err != nil {
		s.Logger.Error("webhook: record delivery", "err", err)
	}
	if sendErr != nil {
		s.Logger.Warn("webhook: delivery failed", "channel", in.Channel, "err", sendErr)
		writeError(w, http.StatusBadGateway, "delivery failed: "+sendErr.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "sent", "chunks": res.Chunks, "id": id})
}

func (s *Server) webhookAI(w http.ResponseWriter, r *http.Request, in webhookIn) {
	sender := in.SenderID
	if sender == "" {
		sender = s.DefaultSenders[in.Channel]
	}
	if sender == "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("sender_id is required: channel %s has no allowlisted user to act for", in.Channel))
		return
	}
	chat := in.ChatID
	if chat == "" {
		chat = sender
	}
	id, err := s.Receiver.Receive(r.Context(), channels.Incoming{Channel: in.Channel, SenderID: sender, ChatID: chat, Text: in.Text, Trusted: true})
	if errors.Is(err, intakedom.ErrInvalidMessage) {
		writeError(w, http.StatusBadRequest, invalidReason(err))
		return
	}
	if err != nil {
		s.Logger.Error("webhook: receive", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the message could not be recorded; try again")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted", "turn_id": id})
}

// decode reads exactly one JSON value into v; anything after it, an
// unknown field or an over-long body is refused. It answers the request
// itself and returns false when the body is refused.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("unexpected data after the JSON value")
			if next != nil && !isSyntaxError(next) {
				err = next
			}
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit))
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid JSON body: %v", err))
	}
	return false
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

// invalidReason is the client's view of an intake refusal.
func invalidReason(err error) string {
	var ie *intakedom.InvalidMessageError
	if errors.As(err, &ie) {
		if ie.Field == "platform_id" {
			return (&intakedom.InvalidMessageError{Field: "message_id", Reason: ie.Reason}).Error()
		}
		return ie.Error()
	}
	return err.Error()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
