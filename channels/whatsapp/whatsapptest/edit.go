package whatsapptest

import (
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Visible is a message as the chat shows it now: its text after every
// edit, and what it showed before.
type Visible struct {
	ID      string
	To      types.JID
	Text    string
	History []string // every version, the first send included
}

// Edits is the number of accepted edits of the message.
func (v Visible) Edits() int { return len(v.History) - 1 }

// RefuseEdits makes the server refuse every edit (on) as WhatsApp does
// where a message can no longer be edited.
func (c *Client) RefuseEdits(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuseEdits = on
}

// Visible returns the text messages the channel sent to chat, in order,
// as edited.
func (c *Client) Visible(chat types.JID) []Visible {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Visible
	index := map[string]int{}
	for _, s := range c.sent {
		switch {
		case s.To != chat || s.Image:
		case s.EditOf != "":
			v := &out[index[s.EditOf]]
			v.Text, v.History = s.Text, append(v.History, s.Text)
		default:
			index[s.ID] = len(out)
			out = append(out, Visible{ID: s.ID, To: s.To, Text: s.Text, History: []string{s.Text}})
		}
	}
	return out
}

// BuildEdit implements whatsapp.Client with whatsmeow's own builder, which
// only assembles the message.
func (c *Client) BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message {
	return new(whatsmeow.Client).BuildEdit(chat, id, newContent)
}

// editOf is the protocol message of an edit, nil for other messages.
func editOf(msg *waE2E.Message) *waE2E.ProtocolMessage {
	pm := msg.GetEditedMessage().GetMessage().GetProtocolMessage()
	if pm.GetType() != waE2E.ProtocolMessage_MESSAGE_EDIT {
		return nil
	}
	return pm
}

// checkEdit refuses an edit while edits are refused, and one of a
// message this account did not send to the chat; c.mu is held.
func (c *Client) checkEdit(to types.JID, edit *waE2E.ProtocolMessage) error {
	if c.refuseEdits {
		return fmt.Errorf("%w 406", whatsmeow.ErrServerReturnedError)
	}
	key := edit.GetKey()
	for _, s := range c.sent {
		if s.ID == key.GetID() && s.EditOf == "" && s.To == to && key.GetFromMe() && key.GetRemoteJID() == to.String() {
			return nil
		}
	}
	return fmt.Errorf("%w 404", whatsmeow.ErrServerReturnedError)
}
