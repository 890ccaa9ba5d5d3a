package channels

import "sync"

// LivePreviews holds the one live preview of each chat of a channel that
// previews replies: a new preview in a chat ends the chat's previous one,
// and the final reply ends the one it replaces.
type LivePreviews[P interface{ ID() string }] struct {
	mu   sync.Mutex
	live map[string]P
}

// Replace makes p the chat's live preview and returns the one it
// replaces, if any, for the caller to end.
func (l *LivePreviews[P]) Replace(chatID string, p P) (old P, replaced bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = map[string]P{}
	}
	old, replaced = l.live[chatID]
	l.live[chatID] = p
	return old, replaced
}

// Take removes and returns the chat's live preview if it is the one
// previewID names, or any for an empty previewID (the caller may have
// asked for the id just before the preview's first message went out).
func (l *LivePreviews[P]) Take(chatID, previewID string) (p P, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok = l.live[chatID]
	if !ok || (previewID != "" && p.ID() != previewID) {
		var none P
		return none, false
	}
	delete(l.live, chatID)
	return p, true
}
