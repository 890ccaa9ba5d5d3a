package providers

import "context"

// Delta is one piece of a reply as the provider writes it: text to append
// to the reply so far, or the start of a tool use. An agent's text before a
// tool use is its narration of the work: the reply (Response.Text) may be
// only the text after its last tool use.
type Delta struct {
	Text string
	// Tool names a tool the agent starts using ("Read", "Bash", ...) and
	// ToolTarget what it works on (a file path, a command), shortened and
	// free of secrets; both empty for a text delta.
	Tool       string
	ToolTarget string
}

// Streamer is implemented by providers that report a reply while it is
// written. Stream returns what Complete would; onDelta is called in order,
// from Stream's goroutine, never after Stream returns. A server that
// cannot stream is answered as a whole: Stream then reports the whole
// text as one delta.
type Streamer interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}
