// Package api is omega's HTTP channel: the owner's programs post messages
// and webhooks to it. Its senders are trusted (local access or the bearer
// token is their authentication), and replies are read back from the
// event log rather than pushed.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
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
		mux.HandleFunc("GET /{$}", toUI) // a browser pointed at the server finds the web UI
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

// toUI redirects to the web UI's front page, keeping the query (a
// ?token= sign-in link written for the server's root works there too).
func toUI(w http.ResponseWriter, r *http.Request) {
	target := "/ui/"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusFound)
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
