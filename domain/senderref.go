package domain

import "strings"

// SenderRef names one person on one channel. Its Key ("channel-id") is
// how read models and the scheduler know the sender; its Stream holds the
// sender's profile events.
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

// SenderLabel shows a read-model sender key as people write a sender,
// "channel:id": keys join the two with a dash, and channel names have
// none. A key without a dash is shown as it is.
func SenderLabel(key string) string {
	if ch, id, ok := strings.Cut(key, "-"); ok {
		return ch + ":" + id
	}
	return key
}
