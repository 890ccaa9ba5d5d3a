package turn

import "github.com/omega-gateway/omega/domain"

// Streamed replies: a reply may show while the model writes it, as one
// preview message that grows. Its pieces are not events (the log stays
// small); the turn records only that the preview began to show and, once
// the platform gave it one, the preview message's id, so that a turn
// resumed after a crash replaces that message instead of sending a
// second copy. The final reply is recorded as for any turn.

// ReplyStreamStarted records that the reply began to show while it was
// written. VisibleMs is the time from the message's receipt to the first
// visible reply text (0 when only the agent's activity showed yet);
// PreviewID the platform id of the preview message, empty until the
// platform gave one (a draft has none). A turn records it again when the
// id becomes known after the first text.
type ReplyStreamStarted struct {
	VisibleMs int64  `json:"visible_ms,omitempty"`
	PreviewID string `json:"preview_id,omitempty"`
}

func (ReplyStreamStarted) EventType() string { return "ReplyStreamStarted" }

func registerStreamEvents(r *domain.Registry) { r.Register(ReplyStreamStarted{}, 1) }

// TurnPreview is what a turn knows of its reply's preview.
type TurnPreview struct {
	Shown     bool   // a preview began to show
	ID        string // its platform message id, once known
	VisibleMs int64  // first visible text, from the message's receipt
}

// applyStream folds the streamed reply's events; false when p is not one
// of them.
func (t *Turn) applyStream(p domain.Payload) bool {
	e, ok := p.(ReplyStreamStarted)
	if !ok {
		return false
	}
	t.Preview.Shown = true
	if e.PreviewID != "" {
		t.Preview.ID = e.PreviewID
	}
	if t.Preview.VisibleMs == 0 {
		t.Preview.VisibleMs = e.VisibleMs
	}
	return true
}
