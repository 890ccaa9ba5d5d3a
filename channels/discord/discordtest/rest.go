package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// appFlagMessageContent is GATEWAY_MESSAGE_CONTENT: the Message Content
// intent is on for a bot in fewer than 100 guilds.
const appFlagMessageContent = 1 << 19

var apiPrefix = regexp.MustCompile(`^/api/v\d+`)

// rest answers Discord's REST API, after the version prefix.
func (s *Server) rest(w http.ResponseWriter, r *http.Request) {
	path := apiPrefix.ReplaceAllString(r.URL.Path, "")
	route := r.Method + " " + path
	s.mu.Lock()
	s.requests[route] = append(s.requests[route], time.Now())
	outage := s.outage
	f, failed := s.nextFailure(route, r.Method+" "+kind(path))
	exhaust, drained := s.exhaust[r.Method+" "+kind(path)]
	if drained && !failed {
		delete(s.exhaust, r.Method+" "+kind(path))
	}
	s.mu.Unlock()
	switch {
	case outage > 0:
		writeError(w, outage, 0, http.StatusText(outage))
		return
	case r.Header.Get("Authorization") != "Bot "+s.Token:
		writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	case failed && f.status == http.StatusTooManyRequests:
		rateLimited(w, f.retryAfter)
		return
	case failed:
		writeError(w, f.status, f.code, f.message)
		return
	}
	bucket(w)
	if drained {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(exhaust.Seconds(), 'f', 3, 64))
	}
	s.route(w, r, route, path)
}

// route answers an accepted call.
func (s *Server) route(w http.ResponseWriter, r *http.Request, route, path string) {
	switch {
	case route == "GET /gateway" || route == "GET /gateway/bot":
		writeJSON(w, map[string]any{"url": "ws://" + s.http.Addr() + "/gateway-ws"})
	case route == "GET /users/@me":
		writeJSON(w, user(BotID, BotName, true))
	case route == "GET /oauth2/applications/@me":
		s.mu.Lock()
		flags := appFlagMessageContent
		if s.noContent {
			flags = 0
		}
		s.mu.Unlock()
		writeJSON(w, map[string]any{"id": BotID, "name": BotName, "flags": flags, "bot_public": false})
	case route == "POST /users/@me/channels":
		s.createDM(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/typing"):
		s.mu.Lock()
		s.typing = append(s.typing, channelOf(path))
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		s.postMessage(w, r, channelOf(path))
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/messages"):
		s.listMessages(w, r, channelOf(path))
	default:
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

// kind is a route's shape for FailNext's "POST messages".
func kind(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return parts[len(parts)-1]
}

func channelOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) >= 2 {
		return parts[1]
	}
	return ""
}

func (s *Server) nextFailure(routes ...string) (failure, bool) {
	for _, r := range routes {
		if q := s.fail[r]; len(q) > 0 {
			s.fail[r] = q[1:]
			return q[0], true
		}
	}
	return failure{}, false
}

func (s *Server) createDM(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.RecipientID == "" {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	writeJSON(w, map[string]any{"id": s.DMChannel(body.RecipientID), "type": 1,
		"recipients": []any{user(body.RecipientID, "user"+body.RecipientID, false)}})
}

// postMessage takes a JSON body or a multipart one (payload_json and
// files[n]), as Discord does.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, channel string) {
	var payload struct {
		Content string `json:"content"`
	}
	var files []File
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			data, _ := io.ReadAll(p)
			if p.FormName() == "payload_json" {
				_ = json.Unmarshal(data, &payload)
				continue
			}
			files = append(files, File{Name: p.FileName(), Data: data})
		}
	} else if err := json.NewDecoder(r.Body).Decode(&payload); err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if payload.Content == "" && len(files) == 0 {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	if len([]rune(payload.Content)) > 2000 {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length.")
		return
	}
	s.mu.Lock()
	m := Sent{ID: s.id(), ChannelID: channel, Content: payload.Content, Files: files, At: time.Now()}
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"id": m.ID, "channel_id": channel, "content": m.Content, "author": user(BotID, BotName, true),
		"timestamp": m.At.Format(time.RFC3339)})
}

// listMessages answers GET /channels/{id}/messages?after=&limit= with
// the people's messages after the id, newest first, as Discord does.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, channel string) {
	after := r.URL.Query().Get("after")
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || limit <= 0 || limit > 100 {
		limit = 50
	}
	s.mu.Lock()
	var out []map[string]any
	posted := s.posted[channel]
	for i := len(posted) - 1; i >= 0 && len(out) < limit; i-- {
		if id, _ := posted[i]["id"].(string); after == "" || later(id, after) {
			out = append(out, posted[i])
		}
	}
	s.mu.Unlock()
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, out)
}

func later(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// bucket sets the rate-limit headers Discord sends on every answer.
func bucket(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "4")
	h.Set("X-RateLimit-Reset", strconv.FormatFloat(float64(time.Now().Add(time.Second).UnixMilli())/1000, 'f', 3, 64))
	h.Set("X-RateLimit-Reset-After", "1.000")
	h.Set("X-RateLimit-Bucket", "omega-double-bucket")
}

func rateLimited(w http.ResponseWriter, after time.Duration) {
	secs := after.Seconds()
	h := w.Header()
	h.Set("Retry-After", strconv.FormatFloat(secs, 'f', 3, 64))
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
	h.Set("X-RateLimit-Bucket", "omega-double-bucket")
	h.Set("X-RateLimit-Scope", "user")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": message})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func user(id, name string, bot bool) map[string]any {
	return map[string]any{"id": id, "username": name, "global_name": name, "discriminator": "0", "bot": bot}
}

// file serves an attachment the double announced in a MESSAGE_CREATE.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/files/")
	s.mu.Lock()
	data, ok := s.files[name]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(data)
}

func itoa(n int64) string { return fmt.Sprint(n) }
