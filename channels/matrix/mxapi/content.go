package mxapi

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// Event types and message types the channel reads or writes.
const (
	TypeMessage    = "m.room.message"
	TypeEncrypted  = "m.room.encrypted"
	TypeEncryption = "m.room.encryption"
	TypeMember     = "m.room.member"

	MsgText   = "m.text"
	MsgEmote  = "m.emote"
	MsgNotice = "m.notice"
	MsgImage  = "m.image"

	FormatHTML = "org.matrix.custom.html"
	RelReplace = "m.replace"
)

// Message is an m.room.message's content.
type Message struct {
	MsgType       string     `json:"msgtype"`
	Body          string     `json:"body"`
	Format        string     `json:"format,omitempty"`
	FormattedBody string     `json:"formatted_body,omitempty"`
	URL           string     `json:"url,omitempty"`
	FileName      string     `json:"filename,omitempty"`
	Info          *FileInfo  `json:"info,omitempty"`
	File          any        `json:"file,omitempty"` // encrypted media
	Mentions      *Mentions  `json:"m.mentions,omitempty"`
	RelatesTo     *RelatesTo `json:"m.relates_to,omitempty"`
	// NewContent is an edit's replacement content.
	NewContent *Message `json:"m.new_content,omitempty"`
}

// FileInfo describes media.
type FileInfo struct {
	MimeType string `json:"mimetype,omitempty"`
	Size     int    `json:"size,omitempty"`
}

// Mentions lists whom a message notifies; the bot's own messages send an
// empty one, so quoting a name pings no one.
type Mentions struct {
	UserIDs []string `json:"user_ids,omitempty"`
}

// RelatesTo relates a message to another: an edit or a reply.
type RelatesTo struct {
	RelType   string `json:"rel_type,omitempty"`
	EventID   string `json:"event_id,omitempty"` // the edited event
	InReplyTo *struct {
		EventID string `json:"event_id"`
	} `json:"m.in_reply_to,omitempty"`
}

// Text is what the person wrote, without the quote of the message they
// answered (the reply fallback older clients put first).
func (m *Message) Text() string {
	body := m.Body
	if m.RelatesTo != nil && m.RelatesTo.InReplyTo != nil && strings.HasPrefix(body, "> ") {
		lines := strings.Split(body, "\n")
		i := 0
		for i < len(lines) && strings.HasPrefix(lines[i], ">") {
			i++
		}
		body = strings.Join(lines[i:], "\n")
	}
	return strings.TrimSpace(body)
}

// Caption is an image's caption: its body when a file name travels
// separately.
func (m *Message) Caption() string {
	if m.FileName != "" && m.FileName != m.Body {
		return m.Body
	}
	return ""
}

// MentionsUser reports whether the message's m.mentions names userID.
func (m *Message) MentionsUser(userID string) bool {
	return m.Mentions != nil && slices.Contains(m.Mentions.UserIDs, userID)
}

var errNoContent = errors.New("event has no content")

// Decode reads an event's content.
func Decode(raw json.RawMessage, into any) error {
	if len(raw) == 0 {
		return errNoContent
	}
	return json.Unmarshal(raw, into)
}
