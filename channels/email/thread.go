package email

import (
	"strings"
	"sync"
)

// maxReferences bounds the References header of a reply: the thread's
// root and its most recent messages are enough for every client.
const maxReferences = 20

// thread is what a reply needs to join the conversation of the message
// it answers.
type thread struct {
	subject    string
	messageID  string
	references []string
}

// threads remembers each chat's latest received message, so a reply
// continues it.
type threads struct {
	mu     sync.Mutex
	byChat map[string]thread
}

func newThreads() *threads { return &threads{byChat: map[string]thread{}} }

func (t *threads) remember(chat string, th thread) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byChat[normalize(chat)] = th
}

func (t *threads) get(chat string) (thread, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	th, ok := t.byChat[normalize(chat)]
	return th, ok
}

// replyHeaders are the Subject, In-Reply-To and References of a reply in
// the thread.
func (th thread) replyHeaders() (subject, inReplyTo string, references []string) {
	subject = strings.TrimSpace(th.subject)
	if !hasReplyPrefix(subject) {
		subject = "Re: " + subject
	}
	references = append(references, th.references...)
	if th.messageID != "" {
		references = append(references, th.messageID)
		inReplyTo = th.messageID
	}
	if len(references) > maxReferences {
		references = append(references[:1], references[len(references)-maxReferences+1:]...)
	}
	return subject, inReplyTo, references
}

func hasReplyPrefix(subject string) bool {
	lower := strings.ToLower(subject)
	for _, p := range []string{"re:", "aw:", "sv:", "antw:"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}
