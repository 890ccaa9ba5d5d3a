package channels

import (
	"context"
	"errors"
)

// ErrNoPreview: the channel cannot preview a reply in this chat (a group,
// a platform that refuses edits); the reply is sent whole.
var ErrNoPreview = errors.New("no preview in this chat")

// Preview is one reply shown while it is written.
type Preview interface {
	// Update shows text, the reply so far with markers already removed.
	// The channel paces updates itself: it may skip or coalesce them, and
	// returns an error only when the preview is broken for good.
	Update(ctx context.Context, text string) error
	// ID is the platform id of the visible preview message: empty until
	// one exists, and for previews (drafts) that have none.
	ID() string
}

// OffChat is implemented by a Preview that leaves nothing in the chat
// (the HTTP API's: its text shows only on the turn's event stream). A
// turn resumed after a crash has nothing of it to replace, so that it
// showed needs no write of its own.
type OffChat interface {
	OffChat() bool
}

// InChat reports whether p leaves a message in the chat that a turn
// resumed after a crash must replace.
func InChat(p Preview) bool {
	if p == nil {
		return false
	}
	off, ok := p.(OffChat)
	return !ok || !off.OffChat()
}

// Previewer is implemented by channels that can show a reply while it is
// written, as one message that grows.
type Previewer interface {
	// StartPreview begins the preview of one reply in chatID, or returns
	// ErrNoPreview.
	StartPreview(ctx context.Context, chatID string) (Preview, error)
	// FinishPreview sends the final reply (the model's Markdown, as
	// SendText takes it) in place of the preview whose platform id is
	// previewID: its first chunk replaces the preview, the rest follow as
	// new messages. An empty previewID sends as SendText does.
	FinishPreview(ctx context.Context, chatID, previewID, text string) (SendResult, error)
}
