package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// envelope is an events_api message waiting for its acknowledgement.
type envelope struct {
	id       string
	payload  map[string]any
	attempts int
}

// sock is one Socket Mode connection.
type sock struct {
	conn *websocket.Conn
	wmu  sync.Mutex

	done chan struct{}

	mu     sync.Mutex
	hello  bool
	frozen bool
	closed bool
}

func (k *sock) greeted() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hello && !k.frozen && !k.closed
}

// freeze makes the socket silent: nothing more is sent or answered.
func (k *sock) freeze() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.frozen = true
}

func (k *sock) isFrozen() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.frozen
}

func (k *sock) send(v any) bool {
	if k.isFrozen() {
		return false
	}
	k.wmu.Lock()
	defer k.wmu.Unlock()
	_ = k.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return k.conn.WriteJSON(v) == nil
}

func (k *sock) close() {
	k.mu.Lock()
	if !k.closed {
		close(k.done)
	}
	k.closed = true
	k.mu.Unlock()
	_ = k.conn.Close()
}

// socket upgrades the bot's connection, greets it with hello and sends
// it every envelope not yet acknowledged, then reads its
// acknowledgements; a stalled server greets and answers nothing.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	k := &sock{conn: conn, done: make(chan struct{})}
	conn.SetPingHandler(func(data string) error {
		if k.isFrozen() {
			return nil
		}
		k.wmu.Lock()
		defer k.wmu.Unlock()
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
	})
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.socks[k] = struct{}{}
	stalled, release := s.stall, s.release
	s.mu.Unlock()
	defer s.drop(k)
	if stalled {
		k.freeze()
		select {
		case <-release:
		case <-k.done:
		}
		return
	}
	k.send(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": "A0001"}})
	k.mu.Lock()
	k.hello = true
	k.mu.Unlock()
	s.mu.Lock()
	s.hellos++
	pending := append([]*envelope(nil), s.pending...)
	s.mu.Unlock()
	for _, e := range pending {
		s.deliver(k, e)
	}
	s.readAcks(k)
}

func (s *Server) drop(k *sock) {
	s.mu.Lock()
	delete(s.socks, k)
	s.mu.Unlock()
	k.close()
}

// readAcks records each acknowledgement until the socket closes.
func (s *Server) readAcks(k *sock) {
	for {
		_, raw, err := k.conn.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(raw, &ack) != nil || ack.EnvelopeID == "" || k.isFrozen() {
			continue
		}
		s.mu.Lock()
		for i, e := range s.pending {
			if e.id == ack.EnvelopeID {
				s.pending = append(s.pending[:i], s.pending[i+1:]...)
				s.acked = append(s.acked, e.id)
				break
			}
		}
		s.mu.Unlock()
	}
}

// deliver sends an envelope, as a retry when it was sent before.
func (s *Server) deliver(k *sock, e *envelope) {
	s.mu.Lock()
	attempt := e.attempts
	e.attempts++
	s.mu.Unlock()
	reason := ""
	if attempt > 0 {
		reason = "timeout"
	}
	k.send(map[string]any{"envelope_id": e.id, "type": "events_api", "accepts_response_payload": false,
		"retry_attempt": attempt, "retry_reason": reason, "payload": e.payload})
}

// push queues an inner event and sends it on an open socket.
func (s *Server) push(ev map[string]any) {
	s.mu.Lock()
	s.seq++
	n := s.seq
	e := &envelope{id: fmt.Sprintf("env-%06d", n), payload: map[string]any{
		"token": "verification", "team_id": TeamID, "api_app_id": "A0001", "event": ev,
		"type": "event_callback", "event_id": fmt.Sprintf("Ev%06d", n), "event_time": 1700000000 + n,
	}}
	s.pending = append(s.pending, e)
	s.sent[e.id] = e.payload
	var target *sock
	for k := range s.socks {
		if k.greeted() {
			target = k
			break
		}
	}
	s.mu.Unlock()
	if target != nil {
		s.deliver(target, e)
	}
}

// ReplayAcked sends every acknowledged envelope again as a retry, as
// Slack does when an acknowledgement did not reach it in time (the bot
// crashed between recording a message and acknowledging it).
func (s *Server) ReplayAcked() {
	s.mu.Lock()
	var again []*envelope
	for _, id := range s.acked {
		again = append(again, &envelope{id: id, payload: s.sent[id], attempts: 1})
	}
	s.acked = nil
	s.pending = append(s.pending, again...)
	var target *sock
	for k := range s.socks {
		if k.greeted() {
			target = k
			break
		}
	}
	s.mu.Unlock()
	if target != nil {
		for _, e := range again {
			s.deliver(target, e)
		}
	}
}

// DMChannel is the id of the bot's direct conversation with user.
func DMChannel(user string) string { return "D" + strings.TrimPrefix(user, "U") }

// PushDM makes user write text to the bot directly; it returns the
// message's ts.
func (s *Server) PushDM(user, text string) string {
	return s.pushMessage(user, DMChannel(user), "im", text, "", nil)
}

// PushChannel makes user write text in channel (in thread threadTS
// unless empty); a text that mentions the bot (<@UBOT0001>) is also
// sent as an app_mention event, as Slack does for an app subscribed to
// both.
func (s *Server) PushChannel(user, channel, text, threadTS string) string {
	return s.pushMessage(user, channel, "channel", text, threadTS, nil)
}

// PushFile makes user share a file with text in channel (channelType
// "im" or "channel").
func (s *Server) PushFile(user, channel, channelType, text, name, mime string, data []byte) string {
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("F%06d", s.seq)
	s.files[id] = &hosted{id: id, name: name, mime: mime, data: data, uploaded: true}
	s.mu.Unlock()
	url := s.URL + "/files/" + id + "/" + name
	f := map[string]any{"id": id, "name": name, "mimetype": mime, "size": len(data), "url_private": url, "url_private_download": url + "?download=1"}
	return s.pushMessage(user, channel, channelType, text, "", []any{f})
}

func (s *Server) pushMessage(user, channel, channelType, text, threadTS string, files []any) string {
	s.mu.Lock()
	ts := s.nextTS()
	s.mu.Unlock()
	ev := map[string]any{"type": "message", "user": user, "text": text, "ts": ts, "channel": channel,
		"channel_type": channelType, "event_ts": ts, "team": TeamID}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	if files != nil {
		ev["subtype"], ev["files"] = "file_share", files
	}
	s.push(ev)
	if channelType != "im" && strings.Contains(text, "<@"+BotUserID+">") {
		mention := map[string]any{"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts, "team": TeamID}
		if threadTS != "" {
			mention["thread_ts"] = threadTS
		}
		s.push(mention)
	}
	return ts
}
