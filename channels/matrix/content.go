package matrix

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// Event types and message types the channel reads or writes.
const (
	typeMessage    = "m.room.message"
	typeEncrypted  = "m.room.encrypted"
	typeEncryption = "m.room.encryption"
	typeMember     = "m.room.member"

	msgText   = "m.text"
	msgEmote  = "m.emote"
	msgNotice = "m.notice"
	msgImage  = "m.image"

	formatHTML = "org.matrix.custom.html"
	relReplace = "m.replace"
)

// message is an m.room.message's content.
type message struct {
	MsgType       string     `json:"msgtype"`
	Body          string     `json:"body"`
	Format        string     `json:"format,omitempty"`
	FormattedBody string     `json:"formatted_body,omitempty"`
	URL           string     `json:"url,omitempty"`
	FileName      string     `json:"filename,omitempty"`
	Info          *fileInfo  `json:"info,omitempty"`
	File          any        `json:"file,omitempty"` // encrypted media
	Mentions      *mentions  `json:"m.mentions,omitempty"`
	RelatesTo     *relatesTo `json:"m.relates_to,omitempty"`
	// NewContent is an edit's replacement content.
	NewContent *message `json:"m.new_content,omitempty"`
}

type fileInfo struct {
	MimeType string `json:"mimetype,omitempty"`
	Size     int    `json:"size,omitempty"`
}

// mentions lists whom a message notifies; the bot's own messages send an
// empty one, so quoting a name pings no one.
type mentions struct {
	UserIDs []string `json:"user_ids,omitempty"`
}

type relatesTo struct {
	RelType   string `json:"rel_type,omitempty"`
	EventID   string `json:"event_id,omitempty"` // the edited event
	InReplyTo *struct {
		EventID string `json:"event_id"`
	} `json:"m.in_reply_to,omitempty"`
}

// text is what the person wrote, without the quote of the message they
// answered (the reply fallback older clients put first).
func (m *message) text() string {
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

// caption is an image's caption: its body when a file name travels
// separately.
func (m *message) caption() string {
	if m.FileName != "" && m.FileName != m.Body {
		return m.Body
	}
	return ""
}

func (m *message) mentionsUser(userID string) bool {
	return m.Mentions != nil && slices.Contains(m.Mentions.UserIDs, userID)
}

var errNoContent = errors.New("event has no content")

func decode(raw json.RawMessage, into any) error {
	if len(raw) == 0 {
		return errNoContent
	}
	return json.Unmarshal(raw, into)
}
