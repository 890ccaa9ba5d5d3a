// Package webui is the operator's web view at /ui/: the audit list with
// live updates, each turn's timeline and each sender's page. Pages are
// rendered on the server by plain functions (render.go); one small script of our
// own (no framework, no CDN, no fonts) turns on the live updates, so it
// works offline and without a build step.
package webui

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/api/webui/buildsui"
	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/projections/auditlog"
)

//go:embed static
var staticFS embed.FS

// Audit is the read side the pages show (auditlog.Queries).
type Audit interface {
	Query(ctx context.Context, f auditlog.Filter) (auditlog.Page, error)
	Turn(ctx context.Context, turnID string) (auditlog.Row, bool, error)
	Sender(ctx context.Context, key string) (auditlog.SenderView, error)
	Stats(ctx context.Context, f auditlog.Filter, by string) ([]auditlog.Stats, error)
}

// Log is the event log a turn's timeline is read from.
type Log interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
}

// Decoder turns events into payloads (domain.Registry).
type Decoder interface {
	Decode(e domain.Event) (domain.Payload, error)
}

// Checklists folds a heartbeat checklist from the log (heartbeat.Checklists).
type Checklists interface {
	Load(ctx context.Context, scope string) (heartbeat.Heartbeat, error)
}

// Server serves /ui/.
type Server struct {
	states  States
	loc     *time.Location
	audit   Audit
	checks  Checklists
	log     Log
	decoder Decoder
	// changed signals that the read models may have moved (the projection
	// engine's Applied); live pages also look every PollEvery.
	changed func(ctx context.Context) <-chan struct{}
	stream  http.Handler // nil: no live replies
	// channels reports the running channels' states; nil shows none.
	channels func() []ChannelStatus
	recall   Recaller // nil: no search page
	calls    Calls
	builds   *buildsui.Pages
	token    string
	logger   *slog.Logger
	// PollEvery bounds how stale a live page may be when no signal comes
	// (another process applied the events). Default 2s.
	PollEvery time.Duration
	// Now is the clock (tests).
	Now func() time.Time

	handler  http.Handler
	stop     chan struct{} // closed by Shutdown: live streams end
	stopOnce sync.Once
}

// Options are what New needs.
type Options struct {
	Audit   Audit
	Log     Log
	Decoder Decoder
	// Changed signals read-model changes; nil leaves live pages to poll.
	Changed func(ctx context.Context) <-chan struct{}
	// Token is OMEGA_API_TOKEN: empty serves loopback clients only.
	Token  string
	Logger *slog.Logger
	// Checklists shows the heartbeat checklist on sender pages; nil when
	// the heartbeat is off.
	Checklists Checklists
	// Stream serves a turn's reply as Server-Sent Events while it is
	// written (api.Server.StreamTurn); nil: running turns show no reply.
	Stream http.Handler
	// Channels reports whether each running channel can receive; nil
	// leaves the audit page without the line.
	Channels func() []ChannelStatus
	// States gives sender pages their "as of" control (nil: none), read
	// in Location, the owner's zone (nil: UTC), where days start on the
	// usage chart too.
	States   States
	Location *time.Location
	// Recall serves the search page (/ui/search); nil: none.
	Recall Recaller
	// Calls lists provider calls for the usage chart and /ui/calls; nil:
	// neither is shown.
	Calls Calls
}

// New returns the web UI.
func New(o Options) (*Server, error) {
	if o.Audit == nil || o.Log == nil || o.Decoder == nil {
		return nil, errors.New("webui: audit, log and decoder are required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	s := &Server{states: o.States, loc: o.Location, audit: o.Audit, checks: o.Checklists, log: o.Log, decoder: o.Decoder, changed: o.Changed, stream: o.Stream, channels: o.Channels, recall: o.Recall, token: o.Token, logger: o.Logger,
		PollEvery: 2 * time.Second, Now: time.Now, stop: make(chan struct{}), calls: o.Calls}
	builds, err := buildsui.New(o.Log, o.Decoder, s.fail)
	if err != nil {
		return nil, err
	}
	s.builds = builds
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP serves the UI under /ui/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Shutdown ends the live streams, which would otherwise keep an HTTP
// server's graceful shutdown waiting (http.Server.RegisterOnShutdown).
func (s *Server) Shutdown() { s.stopOnce.Do(func() { close(s.stop) }) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/{$}", s.auditPage)
	mux.HandleFunc("GET /ui/rows", s.rows)
	mux.HandleFunc("GET /ui/events", s.events)
	mux.HandleFunc("GET /ui/turns/{id}", s.turnPage)
	if s.stream != nil {
		mux.Handle("GET /ui/turns/{id}/stream", s.stream)
	}
	mux.HandleFunc("GET /ui/senders/{channel}/{id}", s.senderPage)
	mux.HandleFunc("GET /ui/usage", s.usagePage)
	if s.recall != nil {
		mux.HandleFunc("GET /ui/search", s.searchPage)
	}
	mux.HandleFunc("GET /ui/builds", s.builds.List)
	mux.HandleFunc("GET /ui/builds/{id}", s.builds.One)
	mux.HandleFunc("GET /ui/calls", s.callsPage)
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		html.Error(w, http.StatusNotFound, "omega has no page at "+r.URL.Path+".")
	})
	outer := http.NewServeMux()
	// The stylesheet and script are public code: served without auth so
	// the sign-in page is styled too.
	static, _ := fs.Sub(staticFS, "static")
	outer.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	outer.Handle("/ui/", s.auth(mux))
	return outer
}

const cookieName = "omega_ui"

// cookieValue is what the cookie holds: a digest of the token, so the
// cookie never carries the secret itself.
func (s *Server) cookieValue() string {
	sum := sha256.Sum256([]byte("omega-ui-cookie:" + s.token))
	return hex.EncodeToString(sum[:])
}

// auth lets loopback clients in when there is no token. With a token,
// ?token= sets an HttpOnly cookie and redirects to the URL without it;
// every other request needs the cookie or the bearer header.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if s.token == "" {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				s.deny(w, http.StatusForbidden, "This server has no API token, so it only answers local clients.")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		if got := q.Get("token"); got != "" {
			if !equal(got, s.token) {
				s.deny(w, http.StatusUnauthorized, "Wrong token.")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cookieValue(), Path: "/ui/", HttpOnly: true,
				Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int((30 * 24 * time.Hour).Seconds())})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(cookieName); err == nil && equal(c.Value, s.cookieValue()) {
			next.ServeHTTP(w, r)
			return
		}
		if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(strings.TrimSpace(h), s.token) {
			next.ServeHTTP(w, r)
			return
		}
		s.deny(w, http.StatusUnauthorized, "Open this page once with ?token=YOUR_API_TOKEN (OMEGA_API_TOKEN); a cookie keeps you signed in.")
	})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (s *Server) deny(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(deniedHTML(msg)))
}

// fail answers a failed read: a bad filter is the user's to fix.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, auditlog.ErrBadFilter) {
		html.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	s.logger.ErrorContext(r.Context(), "webui: read failed", "path", r.URL.Path, "err", err)
	html.Error(w, http.StatusInternalServerError, "Reading omega's records failed; the server log says why.")
}
