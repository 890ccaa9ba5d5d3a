package slack

import (
	"fmt"
	"strings"
	"sync"
)

// chatID addresses a conversation, or a thread in it: "C123" or
// "C123/1700000000.000100" (Slack's ids never hold a slash).
func chatID(channel, thread string) string {
	if thread == "" {
		return channel
	}
	return channel + "/" + thread
}

// parseChat splits a chat id into the conversation and the thread.
func parseChat(id string) (channel, thread string, err error) {
	channel, thread, _ = strings.Cut(id, "/")
	if channel == "" || strings.ContainsAny(channel, " :") {
		return "", "", fmt.Errorf("slack: chat %q: want a conversation id such as C012AB3CD or C012AB3CD/<thread ts>", id)
	}
	return channel, thread, nil
}

// recent remembers the last n message ids the pipeline recorded, so a
// message that arrives as both a message and an app_mention event, or
// again after a lost acknowledgement, reaches the pipeline once from this
// process (the pipeline deduplicates across processes).
type recent struct {
	mu    sync.Mutex
	n     int
	ids   map[string]struct{}
	order []string
}

func newRecent(n int) *recent { return &recent{n: n, ids: make(map[string]struct{}, n)} }

func (r *recent) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ids[id]
	return ok
}

func (r *recent) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.ids[id]; ok {
		return
	}
	r.ids[id] = struct{}{}
	r.order = append(r.order, id)
	if len(r.order) > r.n {
		delete(r.ids, r.order[0])
		r.order = r.order[1:]
	}
}
