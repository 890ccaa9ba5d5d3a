package markers

// AppliedMarker is one marker and its effect.
type AppliedMarker struct {
	Name   string `json:"name"`
	Effect string `json:"effect"`           // e.g. "scheduled 1a2b3c4d", "rejected: bad date"
	Stream string `json:"stream,omitempty"` // where the effect was recorded
}
