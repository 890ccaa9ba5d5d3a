package sender

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

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

// SenderLabel shows a read-model sender key as people write a sender,
// "channel:id": keys join the two with a dash, and channel names have
// none. A key without a dash is shown as it is.
func SenderLabel(key string) string {
	if ch, id, ok := strings.Cut(key, "-"); ok {
		return ch + ":" + id
	}
	return key
}

// TruncateUTF8 cuts s to at most n bytes without splitting a character.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxSenderKey bounds a sender key; see SenderKey.
const maxSenderKey = 200

// SenderKey names a sender across read models, leases and logs:
// "<channel>-<id>". Intake bounds ids, but the log may hold older events
// with any id, and a key must always fit a database index and text
// column: a NUL becomes U+FFFD, and an over-long key keeps a readable
// prefix followed by a hash of the whole, so distinct senders stay
// distinct. Keys of valid ids of ordinary length are unchanged.
func SenderKey(channel, senderID string) string {
	k := channel + "-" + senderID
	if len(k) <= maxSenderKey && strings.IndexByte(k, 0) < 0 {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	k = strings.ReplaceAll(strings.ToValidUTF8(k, "\uFFFD"), "\x00", "\uFFFD")
	if len(k) <= maxSenderKey {
		return k
	}
	return TruncateUTF8(k, maxSenderKey-33) + "~" + hex.EncodeToString(sum[:16])
}
