// Package slacktest is a Slack double for tests: an httptest-style Web
// API (auth.test, apps.connections.open, chat.postMessage, chat.update,
// the external file upload flow, url_private downloads) and the Socket
// Mode WebSocket it hands out, speaking Slack's documented envelopes
// (hello, events_api with envelope_id and acknowledgements, disconnect,
// ping/pong). It records what the bot sent, redelivers envelopes the bot
// did not acknowledge when it connects again (as Slack retries them), and
// can restart, stall, fail with 5xx or rate limit with 429 Retry-After.
package slacktest

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/omega-gateway/omega/internal/loopback"
)

// Tokens and ids the double accepts and uses.
const (
	BotToken  = "xoxb-1-slacktest-bot"
	AppToken  = "xapp-1-slacktest-app"
	BotUserID = "UBOT0001"
	TeamID    = "T0001"
)

// Message is one message the bot posted, as last updated.
type Message struct {
	Channel  string
	ThreadTS string
	TS       string
	Text     string
	Edits    int
}

// Upload is one file the bot shared.
type Upload struct {
	FileID   string
	Channel  string
	ThreadTS string
	Name     string
	Comment  string
	Data     []byte
}

// Server is the double. Its zero value is not usable: call New.
type Server struct {
	// URL is the server's root; the Web API is URL+"/api/".
	URL string

	t    testing.TB
	http *loopback.Server

	mu       sync.Mutex
	running  bool // false from Stop to Start: a socket upgraded meanwhile is dropped
	socks    map[*sock]struct{}
	stall    bool
	release  chan struct{}
	seq      int
	pending  []*envelope
	sent     map[string]map[string]any
	acked    []string
	hellos   int
	messages []Message
	uploads  []Upload
	files    map[string]*hosted
	outage   map[string]int
	limits   map[string][]int
	refuse   map[string][]string
	calls    map[string]int
	users    map[string]string
}

// New starts the double on a loopback port; it stops with the test.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, running: true, socks: map[*sock]struct{}{}, files: map[string]*hosted{}, sent: map[string]map[string]any{},
		outage: map[string]int{}, limits: map[string][]int{}, refuse: map[string][]string{}, calls: map[string]int{}, users: map[string]string{},
		release: make(chan struct{})}
	s.http = loopback.New(t, "slacktest", s.routes())
	s.URL = s.http.URL()
	t.Cleanup(s.Stop)
	return s
}

// APIURL is the Web API's base, for OMEGA_SLACK_API_URL.
func (s *Server) APIURL() string { return s.URL + "/api/" }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/socket", s.socket)
	mux.HandleFunc("/upload/", s.upload)
	mux.HandleFunc("/files/", s.download)
	return mux
}

// Stop takes the server down as a crash would: the listener closes and
// every socket drops. Envelopes not acknowledged are kept for Start.
func (s *Server) Stop() {
	s.mu.Lock()
	socks := s.socks
	s.socks, s.running = map[*sock]struct{}{}, false
	s.mu.Unlock()
	for k := range socks {
		k.close()
	}
	s.http.Stop()
}

// Start brings a stopped server back on the same address.
func (s *Server) Start() {
	s.http.Start()
	s.mu.Lock()
	s.running = true
	s.mu.Unlock()
}

// Restart is Stop then Start.
func (s *Server) Restart() {
	s.Stop()
	s.Start()
}

// Stall makes new sockets (and, with on, the ones open now) silent: the
// upgrade succeeds, then nothing is sent and nothing read, so pings go
// unanswered. Stall(false) closes the stalled sockets, as a load
// balancer finally would, and serves again.
func (s *Server) Stall(on bool) {
	s.mu.Lock()
	s.stall = on
	var socks []*sock
	for k := range s.socks {
		socks = append(socks, k)
	}
	if !on {
		close(s.release)
		s.release = make(chan struct{})
	}
	s.mu.Unlock()
	if on {
		for _, k := range socks {
			k.freeze()
		}
	}
}

// Outage makes method (a Web API method such as "apps.connections.open",
// or "*" for every method) answer status until EndOutage; with "*" the
// open sockets drop too.
func (s *Server) Outage(method string, status int) {
	s.mu.Lock()
	s.outage[method] = status
	var socks []*sock
	if method == "*" {
		for k := range s.socks {
			socks = append(socks, k)
		}
		s.socks = map[*sock]struct{}{}
	}
	s.mu.Unlock()
	for _, k := range socks {
		k.close()
	}
}

// EndOutage ends Outage(method).
func (s *Server) EndOutage(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.outage, method)
}

// RateLimit makes the next call of method answer 429 with Retry-After
// retryAfter seconds.
func (s *Server) RateLimit(method string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[method] = append(s.limits[method], retryAfter)
}

// RefuseNext makes the next call of method answer ok=false with the
// Slack error code.
func (s *Server) RefuseNext(method, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[method] = append(s.refuse[method], code)
}

// Calls counts the calls of a Web API method (refused ones included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Hellos counts the Socket Mode connections greeted with hello.
func (s *Server) Hellos() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hellos
}

// Connected reports whether a greeted socket is open.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.socks {
		if k.greeted() {
			return true
		}
	}
	return false
}

// Pending is how many envelopes wait for an acknowledgement.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Acked returns the acknowledged envelope ids, in order.
func (s *Server) Acked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acked...)
}

// Messages returns what the bot posted in channel ("" for everywhere).
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if channel == "" || m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// Uploads returns the files the bot shared, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// Disconnect sends Slack's disconnect message on the open sockets
// (reason refresh_requested, warning or link_disabled) and closes them
// shortly after, as Slack does.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	var socks []*sock
	for k := range s.socks {
		socks = append(socks, k)
	}
	s.mu.Unlock()
	for _, k := range socks {
		k.send(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "slacktest"}})
		go func() {
			time.Sleep(200 * time.Millisecond)
			k.close()
		}()
	}
}

// authorized reports whether r carries token, as a form field or a
// bearer header (Slack takes both).
func authorized(r *http.Request, token string) bool {
	if strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") == token {
		return true
	}
	return r.FormValue("token") == token
}

// upgrader accepts the bot's socket.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
