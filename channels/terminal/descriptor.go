package terminal

import "github.com/omega-gateway/omega/channels"

// Descriptor describes the terminal channel to the registry. It has no
// settings: `omega chat` opens it, never the server.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "terminal",
	Hint:         formatHint,
	Capabilities: channels.Capabilities{},
}
