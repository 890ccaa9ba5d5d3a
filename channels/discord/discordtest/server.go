// Package discordtest is a double of Discord for tests: a REST API on
// httptest-like loopback ports and a WebSocket gateway that follow
// Discord's documented payloads (HELLO, IDENTIFY, READY, HEARTBEAT/ACK,
// RESUME/RESUMED, INVALID_SESSION, RECONNECT, MESSAGE_CREATE with
// sequence numbers; 429 with Retry-After and X-RateLimit-* headers). It
// records what the bot sent, and can restart on the same address, stall
// or fail, so tests can assert what a person would see.
package discordtest

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/loopback"
)

// BotID and BotName are the bot user the double's token belongs to.
const (
	BotID   = "100000000000000001"
	BotName = "omega"
)

// Sent is one message the bot posted.
type Sent struct {
	ID        string
	ChannelID string
	Content   string
	Files     []File
	At        time.Time
}

// File is one uploaded file.
type File struct {
	Name string
	Data []byte
}

type failure struct {
	status     int
	code       int
	message    string
	retryAfter time.Duration
}

// Server is the double.
type Server struct {
	// URL is the REST base (OMEGA_DISCORD_API_URL); the gateway is
	// announced by GET /api/v10/gateway, as Discord does.
	URL   string
	Token string

	t    testing.TB
	http *loopback.Server

	mu       sync.Mutex
	conns    map[*gwConn]bool
	live     *gwConn
	interval time.Duration

	sent      []Sent
	typing    []string
	dms       map[string]string // user id → DM channel id
	nextID    int64
	fail      map[string][]failure
	outage    int // REST and gateway status while > 0
	silent    bool
	noAck     bool
	requests  map[string][]time.Time
	exhaust   map[string]time.Duration
	history   []dispatch
	seq       int64
	session   string
	sessions  int
	identify  int
	resumes   int
	invalidOn bool
	noContent bool
	files     map[string][]byte
	posted    map[string][]map[string]any // channel → messages people sent, oldest first
}

// New starts the double; it stops with the test.
func New(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{Token: token, t: t, conns: map[*gwConn]bool{}, dms: map[string]string{},
		fail: map[string][]failure{}, requests: map[string][]time.Time{}, exhaust: map[string]time.Duration{}, posted: map[string][]map[string]any{}, files: map[string][]byte{},
		interval: 41250 * time.Millisecond, nextID: 200000000000000000}
	s.http = loopback.New(t, "discordtest", s.routes())
	s.URL = s.http.URL()
	t.Cleanup(s.Stop)
	return s
}

// SetHeartbeatInterval sets the interval HELLO announces to new connections.
func (s *Server) SetHeartbeatInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interval = d
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway-ws", s.gateway)
	mux.HandleFunc("/gateway-ws/", s.gateway)
	mux.HandleFunc("/files/", s.file)
	mux.HandleFunc("/api/", s.rest)
	return mux
}

// Stop closes the listener and every connection, as a crashed server
// would; the double keeps its sessions and history for Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	conns := s.conns
	s.conns, s.live = map[*gwConn]bool{}, nil
	s.mu.Unlock()
	s.http.Stop()
	for c := range conns {
		c.close()
	}
}

// Restart starts the double again on the same address.
func (s *Server) Restart() { s.http.Start() }

// Outage makes REST calls and gateway connections answer status until
// EndOutage.
func (s *Server) Outage(status int) {
	s.mu.Lock()
	s.outage = status
	conns := s.conns
	s.conns, s.live = map[*gwConn]bool{}, nil
	s.mu.Unlock()
	for c := range conns {
		c.close()
	}
}

// EndOutage ends Outage.
func (s *Server) EndOutage() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outage = 0
}

// Silent makes the gateway accept connections and send nothing (no
// HELLO, no ACK, no dispatch) while on; the open connections fall silent
// too.
func (s *Server) Silent(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.silent = on
}

// StopAcking makes the gateway stop answering heartbeats while on.
func (s *Server) StopAcking(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noAck = on
}

// FailNext makes the next n calls of route ("POST /channels/{id}/messages"
// with the id, or "POST messages" for any channel) answer status with
// Discord's JSON error code and message.
func (s *Server) FailNext(route string, n, status, code int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fail[route] = append(s.fail[route], failure{status: status, code: code, message: message})
	}
}

// RateLimitNext makes the next call of route answer 429 with
// Retry-After (and retry_after in the body) of after, and the bucket
// headers Discord sends.
func (s *Server) RateLimitNext(route string, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[route] = append(s.fail[route], failure{status: http.StatusTooManyRequests, retryAfter: after, message: "You are being rate limited."})
}

// ExhaustBucket makes the next accepted call of kind ("POST messages")
// answer X-RateLimit-Remaining: 0 with X-RateLimit-Reset-After of
// resetAfter: a client must wait that long before the bucket's next call.
func (s *Server) ExhaustBucket(kind string, resetAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exhaust[kind] = resetAfter
}

// Requests returns when route was called, accepted or not.
func (s *Server) Requests(route string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.requests[route]...)
}

// Sent returns every message the bot posted, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// SentTo returns the messages posted in channel id.
func (s *Server) SentTo(channelID string) []Sent {
	var out []Sent
	for _, m := range s.Sent() {
		if m.ChannelID == channelID {
			out = append(out, m)
		}
	}
	return out
}

// DMChannel is the id of the DM channel with user (as POST
// /users/@me/channels creates it).
func (s *Server) DMChannel(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmLocked(user)
}

func (s *Server) dmLocked(user string) string {
	if id, ok := s.dms[user]; ok {
		return id
	}
	id := "3" + strings.TrimLeft(user, "0")
	s.dms[user] = id
	return id
}

// Typing returns the channels a typing indicator was started in.
func (s *Server) Typing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.typing...)
}

// Counts returns how many IDENTIFYs and RESUMEs the gateway took.
func (s *Server) Counts() (identifies, resumes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.identify, s.resumes
}

// Connected reports whether a bot session is live on the gateway.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live != nil
}

// WaitConnected waits until a session is live.
func (s *Server) WaitConnected(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !s.Connected() {
		if time.Now().After(deadline) {
			t.Fatal("discordtest: the bot never connected to the gateway")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) id() string {
	s.nextID++
	return itoa(s.nextID)
}

var errClosed = errors.New("discordtest: connection closed")
