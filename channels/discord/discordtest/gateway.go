package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

type frame struct {
	Op   int             `json:"op"`
	D    json.RawMessage `json:"d"`
	S    *int64          `json:"s,omitempty"`
	Type string          `json:"t,omitempty"`
}

type dispatch struct {
	seq  int64
	typ  string
	data json.RawMessage
}

type gwConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex
	once sync.Once
}

func (c *gwConn) send(f frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(2 * time.Second))
	return c.ws.WriteJSON(f)
}

// refuse closes the connection with a gateway close code.
func (c *gwConn) refuse(code int, text string) error {
	c.wmu.Lock()
	_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
	c.wmu.Unlock()
	return errClosed
}

// messageContentIntent is the privileged MESSAGE_CONTENT intent (1 << 15).
const messageContentIntent = 1 << 15

func (c *gwConn) close() { c.once.Do(func() { _ = c.ws.Close() }) }

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// gateway is one WebSocket connection of the bot.
func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	outage := s.outage
	s.mu.Unlock()
	if outage > 0 {
		http.Error(w, http.StatusText(outage), outage)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	s.mu.Lock()
	s.conns[c] = true
	interval := s.interval
	silent := s.silent
	s.mu.Unlock()
	defer s.drop(c)
	if !silent {
		hello, _ := json.Marshal(map[string]any{"heartbeat_interval": interval.Milliseconds()})
		if c.send(frame{Op: opHello, D: hello}) != nil {
			return
		}
	}
	for {
		var f frame
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		if err := s.handle(c, f); err != nil {
			return
		}
	}
}

func (s *Server) drop(c *gwConn) {
	s.mu.Lock()
	delete(s.conns, c)
	if s.live == c {
		s.live = nil
	}
	s.mu.Unlock()
	c.close()
}

func (s *Server) handle(c *gwConn, f frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.silent {
		return nil
	}
	switch f.Op {
	case opHeartbeat:
		if s.noAck {
			return nil
		}
		return c.send(frame{Op: opHeartbeatACK})
	case opIdentify:
		return s.identifyLocked(c, f.D)
	case opResume:
		return s.resumeLocked(c, f.D)
	}
	return nil
}

func (s *Server) identifyLocked(c *gwConn, d json.RawMessage) error {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(d, &id)
	switch {
	case strings.TrimPrefix(id.Token, "Bot ") != s.Token:
		return c.refuse(4004, "Authentication failed.")
	case id.Intents&messageContentIntent != 0 && s.noContent:
		return c.refuse(4014, "Disallowed intent(s).")
	}
	s.identify++
	s.sessions++
	s.session = fmt.Sprintf("session-%d", s.sessions)
	s.history = nil
	s.live = c
	s.seq++
	ready, _ := json.Marshal(map[string]any{"v": 10, "user": user(BotID, BotName, true), "session_id": s.session,
		"resume_gateway_url": "ws://" + s.http.Addr() + "/gateway-ws", "guilds": []any{}, "private_channels": []any{},
		"application": map[string]any{"id": BotID}})
	seq := s.seq
	return c.send(frame{Op: opDispatch, Type: "READY", S: &seq, D: ready})
}

// resumeLocked replays the dispatches after the client's sequence
// number, then RESUMED, as Discord does for a session it still holds.
func (s *Server) resumeLocked(c *gwConn, d json.RawMessage) error {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &r)
	s.resumes++
	if r.SessionID != s.session || s.invalidOn || strings.TrimPrefix(r.Token, "Bot ") != s.Token {
		s.invalidOn = false
		return c.send(frame{Op: opInvalidSession, D: json.RawMessage("false")})
	}
	for _, ev := range s.history {
		if ev.seq <= r.Seq {
			continue
		}
		seq := ev.seq
		if err := c.send(frame{Op: opDispatch, Type: ev.typ, S: &seq, D: ev.data}); err != nil {
			return err
		}
	}
	s.live = c
	s.seq++
	seq := s.seq
	return c.send(frame{Op: opDispatch, Type: "RESUMED", S: &seq, D: json.RawMessage("{}")})
}

// dispatchLocked sends an event to the live session, keeping it for a
// resume in case the connection drops it.
func (s *Server) dispatchLocked(typ string, data any) {
	raw, _ := json.Marshal(data)
	s.seq++
	ev := dispatch{seq: s.seq, typ: typ, data: raw}
	s.history = append(s.history, ev)
	if s.live == nil || s.silent {
		return
	}
	seq := ev.seq
	if err := s.live.send(frame{Op: opDispatch, Type: typ, S: &seq, D: raw}); err != nil {
		s.live.close()
		s.live = nil
	}
}

// Reconnect sends RECONNECT (op 7) on the live connection: the client
// must reconnect and resume.
func (s *Server) Reconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live != nil {
		_ = s.live.send(frame{Op: opReconnect, D: json.RawMessage("null")})
	}
}

// DisallowMessageContent makes IDENTIFY with the Message Content intent
// fail with close 4014, as for a bot whose intent is off in the
// Developer Portal.
func (s *Server) DisallowMessageContent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noContent = true
}

// InvalidateSession makes the next RESUME fail with INVALID_SESSION
// (op 9, not resumable): the client must IDENTIFY again.
func (s *Server) InvalidateSession() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalidOn = true
}

// Message is a message a person sends.
type Message struct {
	ChannelID string
	GuildID   string // empty: a DM
	AuthorID  string
	Author    string
	Content   string
	// MentionBot lists the bot in mentions (and the content should hold
	// <@BotID>); ReplyTo makes it a reply to the bot's message ReplyTo.
	MentionBot bool
	ReplyTo    string
	Bot        bool // the author is a bot

	Attachments []Attachment
}

// Attachment is a file a person attaches.
type Attachment struct {
	Name, ContentType string
	Data              []byte
}

// Push dispatches MESSAGE_CREATE and returns the message's id.
func (s *Server) Push(m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id()
	author := user(m.AuthorID, m.Author, m.Bot)
	msg := map[string]any{"id": id, "channel_id": m.ChannelID, "author": author, "content": m.Content,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "type": 0, "mentions": []any{}, "attachments": []any{}}
	if m.GuildID != "" {
		msg["guild_id"] = m.GuildID
		msg["member"] = map[string]any{"nick": m.Author}
	}
	if m.MentionBot {
		msg["mentions"] = []any{user(BotID, BotName, true)}
	}
	if m.ReplyTo != "" {
		msg["type"] = 19
		msg["message_reference"] = map[string]any{"message_id": m.ReplyTo, "channel_id": m.ChannelID}
		msg["referenced_message"] = map[string]any{"id": m.ReplyTo, "channel_id": m.ChannelID, "author": user(BotID, BotName, true)}
	}
	var atts []any
	for i, a := range m.Attachments {
		key := fmt.Sprintf("%s-%d-%s", id, i, a.Name)
		s.files[key] = a.Data
		atts = append(atts, map[string]any{"id": fmt.Sprintf("%s%d", id, i), "filename": a.Name, "content_type": a.ContentType,
			"size": len(a.Data), "url": "http://" + s.http.Addr() + "/files/" + key, "proxy_url": "http://" + s.http.Addr() + "/files/" + key})
	}
	if atts != nil {
		msg["attachments"] = atts
	}
	s.posted[m.ChannelID] = append(s.posted[m.ChannelID], msg)
	s.dispatchLocked("MESSAGE_CREATE", msg)
	return id
}

// PushDM is a direct message from user.
func (s *Server) PushDM(userID, text string) string {
	return s.Push(Message{ChannelID: s.DMChannel(userID), AuthorID: userID, Author: "user" + userID, Content: text})
}

// PushGuild is a message in a guild channel; mention addresses the bot.
func (s *Server) PushGuild(guild, channel, userID, text string, mention bool) string {
	if mention {
		text = "<@" + BotID + "> " + text
	}
	return s.Push(Message{GuildID: guild, ChannelID: channel, AuthorID: userID, Author: "user" + userID, Content: text, MentionBot: mention})
}
