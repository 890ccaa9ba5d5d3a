package promptctx

import (
	"time"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
)

// ConversationContinues reports whether a message at now continues the
// chat's open conversation whose last message was at lastAt: it does
// until the conversation has been idle for idle; after that the message
// starts a new one. The turn decides with it, and so does the state of a
// past moment, so the two cannot disagree.
func ConversationContinues(lastAt, now time.Time, idle time.Duration) bool {
	return now.Sub(lastAt) < idle
}

// ReplyLanguage is the language a turn answers in: the sender's chosen
// one, else the one the message is written in.
func ReplyLanguage(profile sender.SenderProfile, message string) string {
	if profile.Language != "" {
		return i18n.OrDefault(profile.Language)
	}
	return i18n.Detect(message)
}
