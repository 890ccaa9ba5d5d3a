package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// api serves the Web API methods the bot calls.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls[method]++
	status := s.outage[method]
	if status == 0 {
		status = s.outage["*"]
	}
	retry := pop(s.limits, method)
	code := ""
	if c, ok := s.refuse[method]; ok && len(c) > 0 {
		code, s.refuse[method] = c[0], c[1:]
	}
	s.mu.Unlock()
	switch {
	case status != 0:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<html><body>%d %s</body></html>", status, http.StatusText(status))
		return
	case retry >= 0:
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	case code != "":
		reply(w, map[string]any{"ok": false, "error": code})
		return
	}
	token := BotToken
	if method == "apps.connections.open" {
		token = AppToken
	}
	if !authorized(r, token) {
		reply(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	h, ok := map[string]func(*http.Request) map[string]any{
		"auth.test":                    s.authTest,
		"apps.connections.open":        s.connectionsOpen,
		"chat.postMessage":             s.postMessage,
		"chat.update":                  s.update,
		"users.info":                   s.userInfo,
		"files.getUploadURLExternal":   s.uploadURL,
		"files.completeUploadExternal": s.completeUpload,
	}[method]
	if !ok {
		reply(w, map[string]any{"ok": false, "error": "unknown_method"})
		return
	}
	reply(w, h(r))
}

// pop takes the first pending 429 of method, -1 when none.
func pop(m map[string][]int, method string) int {
	q := m[method]
	if len(q) == 0 {
		return -1
	}
	m[method] = q[1:]
	return q[0]
}

func reply(w http.ResponseWriter, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) authTest(*http.Request) map[string]any {
	return map[string]any{"ok": true, "url": "https://slacktest.slack.com/", "team": "slacktest", "user": "omega",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": "B0001"}
}

// SetUserName gives a member a display name for users.info; members
// without one are answered user_not_found.
func (s *Server) SetUserName(user, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[user] = name
}

func (s *Server) userInfo(r *http.Request) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.FormValue("user")
	name, ok := s.users[id]
	if !ok {
		return map[string]any{"ok": false, "error": "user_not_found"}
	}
	return map[string]any{"ok": true, "user": map[string]any{"id": id, "team_id": TeamID, "name": strings.ToLower(name),
		"real_name": name + " Example", "profile": map[string]any{"display_name": name, "real_name": name + " Example"}}}
}

func (s *Server) connectionsOpen(*http.Request) map[string]any {
	s.mu.Lock()
	s.seq++
	n := s.seq
	s.mu.Unlock()
	return map[string]any{"ok": true, "url": fmt.Sprintf("ws://%s/socket?ticket=%d", s.http.Addr(), n)}
}

func (s *Server) postMessage(r *http.Request) map[string]any {
	channel, text := r.FormValue("channel"), r.FormValue("text")
	switch {
	case channel == "":
		return map[string]any{"ok": false, "error": "channel_not_found"}
	case strings.TrimSpace(text) == "":
		return map[string]any{"ok": false, "error": "no_text"}
	case len(text) > 40000:
		return map[string]any{"ok": false, "error": "msg_too_long"}
	}
	s.mu.Lock()
	ts := s.nextTS()
	s.messages = append(s.messages, Message{Channel: channel, ThreadTS: r.FormValue("thread_ts"), TS: ts, Text: text})
	s.mu.Unlock()
	return map[string]any{"ok": true, "channel": channel, "ts": ts,
		"message": map[string]any{"type": "message", "user": BotUserID, "text": text, "ts": ts, "thread_ts": r.FormValue("thread_ts")}}
}

func (s *Server) update(r *http.Request) map[string]any {
	channel, ts := r.FormValue("channel"), r.FormValue("ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.messages {
		if m := &s.messages[i]; m.Channel == channel && m.TS == ts {
			m.Text = r.FormValue("text")
			m.Edits++
			return map[string]any{"ok": true, "channel": channel, "ts": ts, "text": m.Text}
		}
	}
	return map[string]any{"ok": false, "error": "message_not_found"}
}

// nextTS is a message timestamp, unique and increasing; under s.mu.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq)
}
