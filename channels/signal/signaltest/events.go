package signaltest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stream is one client of the event stream.
type stream struct {
	w    http.ResponseWriter
	f    http.Flusher
	wmu  sync.Mutex
	done chan struct{}

	mu     sync.Mutex
	frozen bool
	closed bool
}

func (st *stream) freeze() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.frozen = true
}

func (st *stream) isFrozen() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.frozen
}

func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.closed {
		st.closed = true
		close(st.done)
	}
}

// write sends raw SSE text unless the stream is frozen.
func (st *stream) write(text string) bool {
	if st.isFrozen() {
		return true
	}
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if _, err := st.w.Write([]byte(text)); err != nil {
		return false
	}
	st.f.Flush()
	return true
}

func (s *Server) sse(e event) string {
	return "id:" + s.prefix + strconv.FormatInt(e.seq, 10) + "\nevent:receive\ndata:" + string(e.data) + "\n\n"
}

// eventsEndpoint serves GET /api/v1/events as signal-cli does: events
// after Last-Event-ID first (all kept ones for an unknown id), then new
// ones as they come, with a ":" keep-alive.
func (s *Server) eventsEndpoint(w http.ResponseWriter, r *http.Request) {
	if s.blocked(w, r) {
		return
	}
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	st := &stream{w: w, f: f, done: make(chan struct{})}
	s.mu.Lock()
	var backlog []event
	if last, has := r.Header["Last-Event-Id"]; has {
		after := int64(0)
		if seq, ok := strings.CutPrefix(last[0], s.prefix); ok {
			after, _ = strconv.ParseInt(seq, 10, 64)
		}
		for _, e := range s.events {
			if e.seq > after {
				backlog = append(backlog, e)
			}
		}
	}
	for _, e := range backlog {
		st.write(s.sse(e))
	}
	s.streams[st] = struct{}{}
	s.connects++
	keepAlive := s.keepAlive
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, st)
		s.mu.Unlock()
	}()
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case <-st.done:
			panic(http.ErrAbortHandler)
		case <-r.Context().Done():
			return
		case <-t.C:
			if !st.write(":\n") {
				return
			}
		}
	}
}

// Message is an incoming message to push.
type Message struct {
	From, Name string
	Text       string
	GroupID    string
	// MentionBot puts a mention of the account at the start of Text.
	MentionBot bool
	// QuoteBot makes the message a reply to one of the account's.
	QuoteBot    bool
	Attachments []Attachment
}

// Push makes a message arrive for the account; it returns its
// timestamp. While the daemon is down it waits on Signal's server and
// arrives when the daemon starts.
func (s *Server) Push(m Message) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	ts := s.clock
	dm := map[string]any{"timestamp": ts, "message": m.Text, "expiresInSeconds": 0, "viewOnce": false,
		"mentions": []any{}, "attachments": []any{}, "contacts": []any{}}
	if m.MentionBot {
		dm["message"] = "\uFFFC " + m.Text
		dm["mentions"] = []any{map[string]any{"name": s.Account, "number": s.Account, "uuid": "aci-of-the-bot", "start": 0, "length": 1}}
	}
	if m.QuoteBot {
		dm["quote"] = map[string]any{"id": ts - 1, "author": s.Account, "authorNumber": s.Account, "text": "earlier"}
	}
	if m.GroupID != "" {
		dm["groupInfo"] = map[string]any{"groupId": m.GroupID, "type": "DELIVER"}
	}
	var atts []any
	for i, a := range m.Attachments {
		id := fmt.Sprintf("att%d-%d", ts, i)
		s.files[id] = a.Data
		atts = append(atts, map[string]any{"contentType": a.MIME, "filename": a.Name, "id": id, "size": len(a.Data)})
	}
	if atts != nil {
		dm["attachments"] = atts
	}
	env := map[string]any{"envelope": map[string]any{"source": m.From, "sourceNumber": m.From, "sourceUuid": "aci-" + m.From,
		"sourceName": m.Name, "sourceDevice": 1, "timestamp": ts, "serverReceivedTimestamp": ts + 5, "dataMessage": dm},
		"account": s.Account}
	data, _ := json.Marshal(env)
	if !s.running {
		s.queued = append(s.queued, data)
		return ts
	}
	s.seq++
	e := event{seq: s.seq, data: data}
	s.events = append(s.events, e)
	if len(s.events) > MaxEvents {
		s.events = s.events[1:]
	}
	for st := range s.streams {
		st.write(s.sse(e))
	}
	return ts
}

// attachment returns a pushed file's bytes, base64 as getAttachment
// answers them.
func (s *Server) attachment(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.files[id]
	return base64.StdEncoding.EncodeToString(data), ok
}
