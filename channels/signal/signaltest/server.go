// Package signaltest is a signal-cli daemon double for tests: its HTTP
// interface (`signal-cli daemon --http`) with the JSON-RPC endpoint
// (send, sendTyping, getAttachment, version), the server-sent event
// stream (events with ids, a keep-alive comment, Last-Event-ID resuming
// from the last 1,000 events, a new id prefix each run) and the check
// endpoint. It records what was sent, and can restart, stall, fail with
// 5xx, and refuse sends as Signal's server does (unregistered, rate
// limited).
package signaltest

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/loopback"
)

// Attachment is a file the bot sent.
type Attachment struct {
	Name, MIME string
	Data       []byte
}

// Sent is one message the bot sent.
type Sent struct {
	Recipient   string // number or ACI; empty for a group
	GroupID     string
	Message     string
	TextStyles  []string
	Attachments []Attachment
	Timestamp   int64
}

// Server is the double. Its zero value is not usable: call New.
type Server struct {
	// URL is the daemon's HTTP endpoint, for OMEGA_SIGNAL_URL.
	URL string
	// Account is the daemon's own number.
	Account string

	t    testing.TB
	http *loopback.Server

	mu        sync.Mutex
	running   bool // false from Stop to Start: a stream opened meanwhile is refused
	keepAlive time.Duration
	prefix    string
	seq       int64
	clock     int64
	events    []event
	queued    [][]byte // messages that arrived while the daemon was down
	streams   map[*stream]struct{}
	stall     bool
	release   chan struct{}
	outage    int
	refusals  []refusal
	sent      []Sent
	typing    []string
	files     map[string][]byte
	connects  int
}

type event struct {
	seq  int64
	data []byte
}

// refusal is how the next send fails.
type refusal struct {
	resultType string // UNREGISTERED_FAILURE, RATE_LIMIT_FAILURE, ...
	retryAfter int
	code       int // a JSON-RPC error code without results (-1: user error)
}

// MaxEvents is how many events the daemon keeps for Last-Event-ID.
const MaxEvents = 1000

// New starts the double for account on a loopback port; it stops with
// the test.
func New(t testing.TB, account string) *Server {
	t.Helper()
	s := &Server{t: t, Account: account, keepAlive: 15 * time.Second,
		streams: map[*stream]struct{}{}, files: map[string][]byte{}, release: make(chan struct{}), clock: time.Now().UnixMilli()}
	s.begin()
	s.http = loopback.New(t, "signaltest", s.routes())
	s.URL = s.http.URL()
	t.Cleanup(s.Stop)
	return s
}

// SetKeepAlive changes the keep-alive interval (signal-cli: 15 s).
func (s *Server) SetKeepAlive(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keepAlive = d
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/rpc", s.rpc)
	mux.HandleFunc("/api/v1/events", s.eventsEndpoint)
	mux.HandleFunc("/api/v1/check", s.check)
	return mux
}

// begin starts a run of the daemon: new event ids, an empty buffer, then
// what Signal's server held for the account meanwhile.
func (s *Server) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = true
	s.prefix = strconv.FormatInt(time.Now().UnixNano(), 10) + "-"
	s.events = nil
	for _, q := range s.queued {
		s.seq++
		s.events = append(s.events, event{seq: s.seq, data: q})
	}
	s.queued = nil
}

// Stop takes the daemon down as a crash would.
func (s *Server) Stop() {
	s.mu.Lock()
	s.running = false
	streams := s.streams
	s.streams = map[*stream]struct{}{}
	s.mu.Unlock()
	for st := range streams {
		st.close()
	}
	s.http.Stop()
}

// Start brings a stopped daemon back on the same address.
func (s *Server) Start() {
	s.begin()
	s.http.Start()
}

// Stall makes the daemon silent: new requests are accepted and never
// answered, open streams send nothing more (no keep-alive). Stall(false)
// drops the stalled requests and serves again.
func (s *Server) Stall(on bool) {
	s.mu.Lock()
	s.stall = on
	var streams []*stream
	for st := range s.streams {
		streams = append(streams, st)
	}
	if !on {
		close(s.release)
		s.release = make(chan struct{})
	}
	s.mu.Unlock()
	if on {
		for _, st := range streams {
			st.freeze()
		}
	}
}

// Outage makes every endpoint answer status (and drops open streams)
// until EndOutage.
func (s *Server) Outage(status int) {
	s.mu.Lock()
	s.outage = status
	streams := s.streams
	s.streams = map[*stream]struct{}{}
	s.mu.Unlock()
	for st := range streams {
		st.close()
	}
}

// EndOutage ends Outage.
func (s *Server) EndOutage() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outage = 0
}

// RefuseNext makes the next send fail for its recipient with a result
// type (UNREGISTERED_FAILURE, IDENTITY_FAILURE, RATE_LIMIT_FAILURE with
// retryAfter seconds), or, with code set, with a bare JSON-RPC error.
func (s *Server) RefuseNext(resultType string, retryAfter, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals = append(s.refusals, refusal{resultType: resultType, retryAfter: retryAfter, code: code})
}

// Sent returns the messages sent, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// SentTo returns the messages sent to a chat: a number or "group:<id>".
func (s *Server) SentTo(chat string) []Sent {
	var out []Sent
	for _, m := range s.Sent() {
		if m.Recipient == chat || (m.GroupID != "" && "group:"+m.GroupID == chat) {
			out = append(out, m)
		}
	}
	return out
}

// Typing returns the chats typing was shown in.
func (s *Server) Typing() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.typing...)
}

// Connected reports whether an event stream is open and served.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for st := range s.streams {
		if !st.isFrozen() {
			return true
		}
	}
	return false
}

// Connects counts the event streams opened.
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// blocked answers a request during an outage or a stall; it reports
// whether the request was handled so.
func (s *Server) blocked(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	status, stalled, release := s.outage, s.stall, s.release
	s.mu.Unlock()
	switch {
	case status != 0:
		w.WriteHeader(status)
		return true
	case stalled:
		select {
		case <-release:
		case <-r.Context().Done():
		}
		panic(http.ErrAbortHandler)
	}
	return false
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	if s.blocked(w, r) {
		return
	}
	w.WriteHeader(http.StatusOK)
}
