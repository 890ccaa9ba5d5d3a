package claudecode

import (
	"bytes"
	"encoding/json"

	"github.com/omega-gateway/omega/providers"
)

// cliStream reads one run's `--output-format stream-json` output, a JSON
// object per line: it reports text and tool uses as deltas while the CLI
// works and keeps the final result line. Output that is not stream-json
// (the single result object or message array of older CLIs and of test
// doubles) is kept aside and parsed whole at the end.
type cliStream struct {
	emit   func(providers.Delta)
	prefix string // written before the run's first text: joins resumed parts
	result *cliResult
	// unparsed holds the lines that are not stream-json, up to
	// maxLineBytes.
	unparsed bytes.Buffer
	// partialText is set by the first text_delta stream event: the
	// assistant messages that follow repeat text already reported.
	partialText bool
	textEmitted bool
	pending     map[int]*pendingTool // tool_use blocks being streamed, by index
	toolsSeen   map[string]bool      // ids of tool uses already reported
}

type pendingTool struct {
	id, name string
	input    bytes.Buffer
}

func newCLIStream(emit func(providers.Delta), prefix string) *cliStream {
	return &cliStream{emit: emit, prefix: prefix,
		pending: map[int]*pendingTool{}, toolsSeen: map[string]bool{}}
}

// cliLine is what every stream-json line has. parent_tool_use_id is set
// on the messages of a sub-agent, whose text is not the reply.
type cliLine struct {
	Type            string  `json:"type"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
}

type cliStreamEvent struct {
	Event struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"content_block"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	} `json:"event"`
}

type cliAssistant struct {
	Message struct {
		Content []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Text  string          `json:"text"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

// line takes one line of output.
func (s *cliStream) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	var head cliLine
	if b[0] != '{' || json.Unmarshal(b, &head) != nil || head.Type == "" {
		s.keepUnparsed(b)
		return
	}
	sub := head.ParentToolUseID != nil && *head.ParentToolUseID != ""
	switch head.Type {
	case "stream_event":
		var ev cliStreamEvent
		if json.Unmarshal(b, &ev) == nil {
			s.streamEvent(ev, sub)
		}
	case "assistant":
		var msg cliAssistant
		if json.Unmarshal(b, &msg) == nil {
			s.assistant(msg, sub)
		}
	case "result":
		var res cliResult
		if json.Unmarshal(b, &res) == nil {
			s.result = &res
		}
	}
}

func (s *cliStream) streamEvent(ev cliStreamEvent, sub bool) {
	e := ev.Event
	switch e.Type {
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			s.pending[e.Index] = &pendingTool{id: e.ContentBlock.ID, name: e.ContentBlock.Name}
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			if !sub {
				s.partialText = true
				s.text(e.Delta.Text)
			}
		case "input_json_delta":
			if p := s.pending[e.Index]; p != nil {
				p.input.WriteString(e.Delta.PartialJSON)
			}
		}
	case "content_block_stop":
		// A tool use is reported once its input is whole, so that its
		// target can be named.
		if p := s.pending[e.Index]; p != nil {
			delete(s.pending, e.Index)
			s.tool(p.id, p.name, p.input.Bytes())
		}
	}
}

// assistant takes a whole message. With partial messages its text was
// reported already; its tool uses were too, unless the CLI streams none.
func (s *cliStream) assistant(msg cliAssistant, sub bool) {
	for _, b := range msg.Message.Content {
		switch b.Type {
		case "text":
			if !sub && !s.partialText {
				s.text(b.Text)
			}
		case "tool_use":
			s.tool(b.ID, b.Name, b.Input)
		}
	}
}

func (s *cliStream) text(t string) {
	if t == "" {
		return
	}
	if !s.textEmitted && s.prefix != "" {
		s.emit(providers.Delta{Text: s.prefix})
	}
	s.textEmitted = true
	s.emit(providers.Delta{Text: t})
}

func (s *cliStream) tool(id, name string, input []byte) {
	if name == "" || (id != "" && s.toolsSeen[id]) {
		return
	}
	if id != "" {
		s.toolsSeen[id] = true
	}
	s.emit(providers.Delta{Tool: name, ToolTarget: toolTarget(input)})
}

func (s *cliStream) keepUnparsed(b []byte) {
	if s.unparsed.Len()+len(b) > maxLineBytes {
		return
	}
	s.unparsed.Write(b)
	s.unparsed.WriteByte('\n')
}

func (s *cliStream) unparsedText() string { return s.unparsed.String() }

// finish returns the run's result: its result line, or else the output
// that was not stream-json parsed as the older single object or array.
func (s *cliStream) finish() (cliResult, error) {
	if s.result != nil {
		return *s.result, nil
	}
	return parseCLIResult(s.unparsed.Bytes())
}

// lineWriter is a process's stdout cut into lines, sent on lines. A line
// longer than maxLineBytes is dropped: only tool results are that
// long, and nothing is read from them.
type lineWriter struct {
	lines    chan<- []byte
	buf      []byte
	skipping bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.skipping && len(w.buf)+len(chunk) > maxLineBytes {
			w.skipping, w.buf = true, nil
		}
		if !w.skipping {
			w.buf = append(w.buf, chunk...)
		}
		if i < 0 {
			break
		}
		if !w.skipping {
			w.lines <- w.buf
		}
		w.buf, w.skipping = nil, false
		p = p[i+1:]
	}
	return n, nil
}

// flush sends the last line if it had no newline; only called once the
// process has exited.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 && !w.skipping {
		w.lines <- w.buf
	}
	w.buf = nil
}

var _ providers.Streamer = (*Provider)(nil)
