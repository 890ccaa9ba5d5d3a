package domain

import "strings"

// SenderRef names one person on one channel, or a group chat's own
// conversation (GroupRef). Its Key ("channel-id") is how read models and
// the scheduler know the sender; its Stream holds the sender's profile
// events.
type SenderRef struct {
	Channel string
	ID      string
}

// Key is the sender's read-model and scheduling key, "channel-id"
// (bounded, see SenderKey).
func (s SenderRef) Key() string { return SenderKey(s.Channel, s.ID) }

// Stream is the sender's profile stream, "sender-channel-id".
func (s SenderRef) Stream() string { return SenderStream(s.Channel, s.ID) }

// Sender is who sent the message.
func (m MessageReceived) Sender() SenderRef { return SenderRef{Channel: m.Channel, ID: m.SenderID} }

// groupPrefix starts the id under which a group chat keeps its own
// conversation and provider session beside its channel's senders. Platform
// user ids never start with it.
const groupPrefix = "group:"

// GroupRef names a group chat's own conversation and provider session.
func GroupRef(channel, chatID string) SenderRef {
	return SenderRef{Channel: channel, ID: groupPrefix + chatID}
}

// IsGroup reports whether the ref names a group chat (see GroupRef).
func (s SenderRef) IsGroup() bool { return strings.HasPrefix(s.ID, groupPrefix) }

// Chat is whose conversation the message joins and whose provider session
// it resumes: in a private chat the sender's; in a group chat the group's,
// shared by every member who talks to omega there, so that nothing said in
// private reaches a group and a group's exchange never enters a private
// conversation.
func (m MessageReceived) Chat() SenderRef {
	if !m.IsGroup || m.ChatID == "" {
		return m.Sender()
	}
	return GroupRef(m.Channel, m.ChatID)
}

// SenderLabel shows a read-model sender key as people write a sender,
// "channel:id": keys join the two with a dash, and channel names have
// none. A key without a dash is shown as it is.
func SenderLabel(key string) string {
	if ch, id, ok := strings.Cut(key, "-"); ok {
		return ch + ":" + id
	}
	return key
}
