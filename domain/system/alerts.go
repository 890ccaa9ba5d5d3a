package system

// OwnerAlerted records a notice omega sent its owner on its own initiative
// (a bug report, a limitation), or could not send (Error), on the stream of
// what it is about. Kind is the marker's name.
type OwnerAlerted struct {
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	Channel string `json:"channel,omitempty"`
	Chat    string `json:"chat,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (OwnerAlerted) EventType() string { return "OwnerAlerted" }
