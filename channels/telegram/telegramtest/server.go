// Package telegramtest is an in-process Telegram Bot API server for tests.
// It speaks the real wire protocol (JSON or multipart requests, the
// {"ok":...} envelope, HTTP status codes, long polling with offsets) and
// validates HTML parse mode like the real API, so a client that works
// against it works against api.telegram.org.
package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/freeport"
)

// The bot the server impersonates.
const (
	BotID       int64 = 7000001
	BotUsername       = "omega_test_bot"
	BotName           = "Omega Test"
)

// MaxPollTimeout caps getUpdates' timeout so a test never hangs for long.
const MaxPollTimeout = 5 * time.Second

// Call is one outbound request the bot made.
type Call struct {
	Method    string // "sendMessage", "sendChatAction", "sendPhoto", "editMessageText", "sendMessageDraft"
	ChatID    string
	Text      string // message text or photo caption, as sent
	ParseMode string
	Action    string // chat action
	Photo     []byte
	// MessageID is the id of the created message, or of the edited one
	// for editMessageText; 0 if rejected.
	MessageID int64
	// Error is the description returned when the call was refused; empty
	// when it was accepted.
	Error string
	// At is when the server answered (or gave up on) the call.
	At time.Time
}

// Accepted reports whether the API accepted the call.
func (c Call) Accepted() bool { return c.Error == "" }

type failure struct {
	status      int
	retryAfter  int
	description string
}

type storedUpdate struct {
	id  int64
	raw json.RawMessage
}

// Server is a fake Bot API. Create it with New.
type Server struct {
	URL   string // base URL, use as the API server URL
	token string

	srvMu sync.Mutex
	srv   *httptest.Server // nil while stopped

	mu       sync.Mutex
	updates  []storedUpdate
	nextID   int64
	nextMsg  int64
	files    map[string][]byte
	failures map[string][]failure
	outages  map[string]int // method -> status every call fails with; OutageReset drops the connection
	stalled  bool           // getUpdates never answers
	polls    []time.Time    // when each getUpdates call arrived
	sent     []Call
	menus    map[string][]BotCommand // by language_code, "" the default
	changed  chan struct{}           // closed and replaced on every state change

	visible   []*Visible      // messages the bot sent that are still there
	drafts    []Draft         // accepted sendMessageDraft calls
	draftOpen map[string]bool // chats that show a draft now
	draftMode DraftSupport
}

// BotCommand is one entry of the bot's command menu (setMyCommands).
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// New starts a server accepting the given token; it is closed when the
// test ends.
func New(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{
		token:    token,
		nextID:   1,
		nextMsg:  1000,
		files:    map[string][]byte{},
		failures: map[string][]failure{},
		outages:  map[string]int{},
		menus:    map[string][]BotCommand{},
		changed:  make(chan struct{}),

		draftOpen: map[string]bool{},
	}
	// Outside the ephemeral range, so that no connection takes the port
	// while Stop has the server down (Restart listens on it again).
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	_ = s.srv.Listener.Close()
	s.srv.Listener = freeport.Listen(t)
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.Stop)
	return s
}

// PushUpdate queues an update. v is a struct or map marshalled to JSON,
// or raw JSON ([]byte, string, json.RawMessage) kept verbatim apart from
// update_id, which the server assigns. It returns the update_id.
func (s *Server) PushUpdate(v any) int64 {
	var raw []byte
	switch x := v.(type) {
	case []byte:
		raw = x
	case json.RawMessage:
		raw = x
	case string:
		raw = []byte(x)
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			panic(fmt.Sprintf("telegramtest: marshal update: %v", err))
		}
	}
	// Decoding into raw fields keeps deliberately malformed values intact.
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		panic(fmt.Sprintf("telegramtest: update is not a JSON object: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID++
	fields["update_id"] = json.RawMessage(strconv.FormatInt(id, 10))
	fields["message"] = withMessageID(fields["message"], id)
	if fields["message"] == nil {
		delete(fields, "message")
	}
	out, _ := json.Marshal(fields) // cannot fail: values are valid raw JSON
	s.updates = append(s.updates, storedUpdate{id: id, raw: out})
	s.notify()
	return id
}

// withMessageID gives a message without message_id a unique one, so
// PlatformIDs built from it do not collide.
func withMessageID(raw json.RawMessage, id int64) json.RawMessage {
	msg := map[string]json.RawMessage{}
	if raw == nil || json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	if _, ok := msg["message_id"]; ok {
		return raw
	}
	msg["message_id"] = json.RawMessage(strconv.FormatInt(id, 10))
	out, _ := json.Marshal(msg)
	return out
}

// Message builds a message object (message_id is assigned on push
// unless set). A chat id different from the sender
// id makes it a supergroup message.
func Message(chatID, fromID int64, text string) map[string]any {
	chat := map[string]any{"id": chatID, "type": "private", "first_name": "User"}
	if chatID != fromID {
		chat = map[string]any{"id": chatID, "type": "supergroup", "title": "Group"}
	}
	msg := map[string]any{
		"date": time.Now().Unix(),
		"chat": chat,
		"from": map[string]any{"id": fromID, "is_bot": false, "first_name": "User", "username": fmt.Sprintf("user%d", fromID)},
	}
	if text != "" {
		msg["text"] = text
	}
	return msg
}

// PushText queues a text message update and returns its update_id.
func (s *Server) PushText(chatID, fromID int64, text string) int64 {
	return s.PushUpdate(map[string]any{"message": Message(chatID, fromID, text)})
}

// AddFile makes a file available through getFile and the download URL.
func (s *Server) AddFile(fileID string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = data
}

// FailNext makes the next n calls of method fail with status: 429 carries
// parameters.retry_after, 403 says the bot was blocked, 400 is a generic
// bad request, 5xx is a server error.
func (s *Server) FailNext(method string, n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{status: status, retryAfter: retryAfter})
	}
}

// FailNextWith makes the next n calls of method fail with status and the
// given description, e.g. 400 "Bad Request: can't parse entities: ...".
func (s *Server) FailNextWith(method string, n, status int, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{status: status, description: description})
	}
}

// OutageReset makes Outage drop the connection without an answer, as a
// refused or reset connection does.
const OutageReset = 0

// Outage makes every call of method fail with status (5xx, or
// OutageReset) until EndOutage. Failed calls are recorded in Sent with
// their error.
func (s *Server) Outage(method string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outages[method] = status
}

// EndOutage makes method answer again.
func (s *Server) EndOutage(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.outages, method)
}

// StallUpdates makes getUpdates hang without ever answering (on) until
// the client gives up; each abandoned call is recorded in Sent with the
// error "stalled".
func (s *Server) StallUpdates(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = on
	s.notify()
}

// Calls returns the recorded calls of method, accepted or not.
func (s *Server) Calls(method string) []Call {
	var out []Call
	for _, c := range s.Sent() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) outage(method string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status, ok := s.outages[method]
	return status, ok
}

// fail answers a call during an outage: an error status, or a dropped
// connection.
func (s *Server) fail(w http.ResponseWriter, method string, p params, status int) {
	if status == OutageReset {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				s.record(method, p, nil, "connection reset")
				_ = conn.Close()
				return
			}
		}
		status = http.StatusBadGateway
	}
	desc := failureDescription(failure{status: status})
	s.record(method, p, nil, desc)
	writeError(w, status, desc, 0)
}

// Sent returns every outbound call so far, accepted or not, in order.
func (s *Server) Sent() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.sent...)
}

// Messages returns the accepted sendMessage calls to chatID, in order.
func (s *Server) Messages(chatID int64) []Call {
	id := strconv.FormatInt(chatID, 10)
	var out []Call
	for _, c := range s.Sent() {
		if c.Method == "sendMessage" && c.ChatID == id && c.Accepted() {
			out = append(out, c)
		}
	}
	return out
}

// WaitSent blocks until at least n calls were recorded or ctx ends.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Call, error) {
	for {
		s.mu.Lock()
		sent := append([]Call(nil), s.sent...)
		changed := s.changed
		s.mu.Unlock()
		if len(sent) >= n {
			return sent, nil
		}
		select {
		case <-ctx.Done():
			return sent, fmt.Errorf("wait for %d calls, have %d: %w", n, len(sent), ctx.Err())
		case <-changed:
		}
	}
}

// Pending returns the number of updates not yet confirmed by an offset.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// notify wakes waiters; callers hold s.mu.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	token, method, _ := strings.Cut(rest, "/")
	if token != s.token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	p, err := readParams(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request: "+err.Error(), 0)
		return
	}
	if status, ok := s.outage(method); ok {
		s.fail(w, method, p, status)
		return
	}
	if f, ok := s.takeFailure(method); ok {
		s.record(method, p, nil, failureDescription(f))
		writeError(w, f.status, failureDescription(f), f.retryAfter)
		return
	}
	s.dispatch(w, r, method, p)
}

// dispatch answers one Bot API method.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, method string, p params) {
	switch method {
	case "getMe":
		writeOK(w, map[string]any{"id": BotID, "is_bot": true, "first_name": BotName, "username": BotUsername})
	case "getUpdates":
		s.getUpdates(w, r, p)
	case "sendMessage":
		s.sendMessage(w, p)
	case "sendMessageDraft":
		s.sendMessageDraft(w, p)
	case "editMessageText":
		s.editMessageText(w, p)
	case "sendChatAction":
		s.sendChatAction(w, p)
	case "sendPhoto":
		s.sendPhoto(w, p)
	case "getFile":
		s.getFile(w, p)
	case "setMyCommands":
		s.setMyCommands(w, p)
	default:
		writeError(w, http.StatusNotFound, "Not Found: method not found", 0)
	}
}

func (s *Server) takeFailure(method string) (failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.failures[method]
	if len(q) == 0 {
		return failure{}, false
	}
	s.failures[method] = q[1:]
	return q[0], true
}

func failureDescription(f failure) string {
	switch {
	case f.description != "":
		return f.description
	case f.status == http.StatusTooManyRequests:
		return fmt.Sprintf("Too Many Requests: retry after %d", f.retryAfter)
	case f.status == http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case f.status == http.StatusBadRequest:
		return "Bad Request: chat not found"
	case f.status >= 500:
		return "Internal Server Error"
	default:
		return http.StatusText(f.status)
	}
}

// getUpdates confirms updates below offset and long-polls for the rest.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p params) {
	s.mu.Lock()
	s.polls = append(s.polls, time.Now())
	s.mu.Unlock()
	if s.stall(r) {
		s.record("getUpdates", p, nil, "stalled")
		return
	}
	offset, _ := strconv.ParseInt(p.get("offset"), 10, 64)
	limit, _ := strconv.Atoi(p.get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeoutSec, _ := strconv.Atoi(p.get("timeout"))
	deadline := time.Now().Add(min(time.Duration(timeoutSec)*time.Second, MaxPollTimeout))
	for {
		s.mu.Lock()
		out := s.confirmAndTake(offset, limit)
		changed := s.changed
		s.mu.Unlock()
		if len(out) > 0 || !time.Now().Before(deadline) {
			if out == nil {
				out = []json.RawMessage{}
			}
			writeOK(w, out)
			return
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-r.Context().Done():
			timer.Stop()
			return
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// confirmAndTake drops the updates below offset (a positive offset
// confirms them) and returns up to limit of the rest. s.mu is held.
func (s *Server) confirmAndTake(offset int64, limit int) []json.RawMessage {
	if offset > 0 {
		kept := s.updates[:0]
		for _, u := range s.updates {
			if u.id >= offset {
				kept = append(kept, u)
			}
		}
		s.updates = kept
	}
	var out []json.RawMessage
	for _, u := range s.updates {
		if len(out) == limit {
			break
		}
		out = append(out, u.raw)
	}
	return out
}

// stall holds a getUpdates call while updates are stalled and reports
// whether the client gave up on it.
func (s *Server) stall(r *http.Request) bool {
	for {
		s.mu.Lock()
		stalled, changed := s.stalled, s.changed
		s.mu.Unlock()
		if !stalled {
			return false
		}
		select {
		case <-r.Context().Done():
			return true
		case <-changed:
		}
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, p params) {
	visible, desc := checkText(p)
	if desc != "" {
		s.reject(w, "sendMessage", p, desc)
		return
	}
	id := s.record("sendMessage", p, nil, "")
	s.mu.Lock()
	s.showMessage(id, p.get("chat_id"), p.get("text"), p.get("parse_mode"), visible)
	s.mu.Unlock()
	writeOK(w, s.messageResult(p, id, map[string]any{"text": visible}))
}

func (s *Server) sendChatAction(w http.ResponseWriter, p params) {
	if p.get("chat_id") == "" || p.get("action") == "" {
		s.reject(w, "sendChatAction", p, "Bad Request: chat not found")
		return
	}
	s.record("sendChatAction", p, nil, "")
	writeOK(w, true)
}

func (s *Server) sendPhoto(w http.ResponseWriter, p params) {
	photo, ok := p.files["photo"]
	if !ok {
		if id := p.get("photo"); id != "" {
			s.mu.Lock()
			photo, ok = s.files[id]
			s.mu.Unlock()
		}
	}
	if !ok || len(photo) == 0 {
		s.reject(w, "sendPhoto", p, "Bad Request: there is no photo in the request")
		return
	}
	if strings.EqualFold(p.get("parse_mode"), "HTML") {
		if _, err := parseHTML(p.get("caption")); err != nil {
			s.reject(w, "sendPhoto", p, "Bad Request: can't parse entities: "+err.Error())
			return
		}
	}
	id := s.record("sendPhoto", p, photo, "")
	writeOK(w, s.messageResult(p, id, map[string]any{
		"photo": []map[string]any{{"file_id": "sent-photo", "file_unique_id": "sent-photo", "width": 1, "height": 1}},
	}))
}

// setMyCommands keeps the menu for its language_code, checked as the Bot
// API checks it: 1-32 lower-case letters, digits and underscores per
// command, a description of 1-256 characters, at most 100 commands.
func (s *Server) setMyCommands(w http.ResponseWriter, p params) {
	var cmds []BotCommand
	if err := json.Unmarshal([]byte(p.get("commands")), &cmds); err != nil || len(cmds) > 100 {
		writeError(w, http.StatusBadRequest, "Bad Request: can't parse commands", 0)
		return
	}
	for _, c := range cmds {
		if !validCommand(c.Command) || c.Description == "" || len([]rune(c.Description)) > 256 {
			writeError(w, http.StatusBadRequest, "Bad Request: BOT_COMMAND_INVALID", 0)
			return
		}
	}
	s.mu.Lock()
	s.menus[p.get("language_code")] = cmds
	s.notify()
	s.mu.Unlock()
	writeOK(w, true)
}

func validCommand(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// Menu returns the command menu set for languageCode ("" the default
// one) and whether one was set.
func (s *Server) Menu(languageCode string) ([]BotCommand, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.menus[languageCode]
	return append([]BotCommand(nil), m...), ok
}

func (s *Server) getFile(w http.ResponseWriter, p params) {
	id := p.get("file_id")
	s.mu.Lock()
	data, ok := s.files[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, "Bad Request: invalid file_id", 0)
		return
	}
	writeOK(w, map[string]any{"file_id": id, "file_unique_id": "u-" + id, "file_size": len(data), "file_path": "files/" + id})
}

func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, _ := strings.Cut(rest, "/")
	if token != s.token {
		writeError(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	s.mu.Lock()
	data, ok := s.files[strings.TrimPrefix(path, "files/")]
	s.mu.Unlock()
	if !ok || !strings.HasPrefix(path, "files/") {
		writeError(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

func (s *Server) reject(w http.ResponseWriter, method string, p params, description string) {
	s.record(method, p, nil, description)
	writeError(w, http.StatusBadRequest, description, 0)
}

// record stores a call and returns the new message id (0 if rejected).
func (s *Server) record(method string, p params, photo []byte, errDesc string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Call{
		Method:    method,
		ChatID:    p.get("chat_id"),
		Text:      p.get("text"),
		ParseMode: p.get("parse_mode"),
		Action:    p.get("action"),
		Photo:     append([]byte(nil), photo...),
		Error:     errDesc,
		At:        time.Now(),
	}
	if method == "sendPhoto" {
		c.Text = p.get("caption")
	}
	if errDesc == "" && (method == "sendMessage" || method == "sendPhoto") {
		s.nextMsg++
		c.MessageID = s.nextMsg
	}
	s.sent = append(s.sent, c)
	s.notify()
	return c.MessageID
}

func (s *Server) messageResult(p params, id int64, extra map[string]any) map[string]any {
	chatID, _ := strconv.ParseInt(p.get("chat_id"), 10, 64)
	chatType := "private"
	if chatID < 0 {
		chatType = "supergroup"
	}
	res := map[string]any{
		"message_id": id,
		"date":       time.Now().Unix(),
		"chat":       map[string]any{"id": chatID, "type": chatType},
		"from":       map[string]any{"id": BotID, "is_bot": true, "first_name": BotName, "username": BotUsername},
	}
	for k, v := range extra {
		res[k] = v
	}
	return res
}

func writeOK(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeError(w http.ResponseWriter, status int, description string, retryAfter int) {
	body := map[string]any{"ok": false, "error_code": status, "description": description}
	if retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// params are a request's parameters, from a JSON body, a form or the
// query string, as the Bot API accepts all three.
type params struct {
	values map[string]string
	files  map[string][]byte
}

func (p params) get(k string) string { return p.values[k] }

func readParams(r *http.Request) (params, error) {
	p := params{values: map[string]string{}, files: map[string][]byte{}}
	for k, v := range r.URL.Query() {
		p.values[k] = v[0]
	}
	mediaType, mediaParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/json":
		return p, readJSONParams(r.Body, p)
	case "multipart/form-data":
		return p, readMultipart(multipart.NewReader(r.Body, mediaParams["boundary"]), p)
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return p, fmt.Errorf("parse form: %w", err)
		}
		for k, v := range r.PostForm {
			p.values[k] = v[0]
		}
	}
	return p, nil
}

func readJSONParams(body io.Reader, p params) error {
	raw := map[string]json.RawMessage{}
	if err := json.NewDecoder(body).Decode(&raw); err != nil && err != io.EOF {
		return fmt.Errorf("decode JSON: %w", err)
	}
	for k, v := range raw {
		var str string
		if json.Unmarshal(v, &str) == nil {
			p.values[k] = str
			continue
		}
		p.values[k] = string(v)
	}
	return nil
}

func readMultipart(mr *multipart.Reader, p params) error {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read multipart: %w", err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("read part %s: %w", part.FormName(), err)
		}
		if part.FileName() != "" {
			p.files[part.FormName()] = data
			continue
		}
		p.values[part.FormName()] = string(data)
	}
}
