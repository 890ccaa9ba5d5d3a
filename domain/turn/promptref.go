package turn

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"github.com/google/uuid"
)

// A turn's prompt is recorded by reference (ContextBuilt schema 2): the
// sizeable pieces of the system prompt and of a resumed session's prompt
// (prompt files, sections, blocks) are stored once each, by content, on a
// stream of their own; the history names the turns its messages come from.

// PromptTextStored is one distinct prompt text, recorded once on its
// content-addressed stream (PromptTextStream of its TextHash).
type PromptTextStored struct {
	Text string `json:"text"`
}

func (PromptTextStored) EventType() string { return "PromptTextStored" }

// promptTextPrefix starts the name of every prompt text stream.
const promptTextPrefix = "prompt-"

// PromptTextStream names the stream that holds the text with this hash.
func PromptTextStream(hash string) string { return promptTextPrefix + hash }

// IsPromptTextStream reports whether a stream holds a prompt text.
func IsPromptTextStream(stream string) bool { return strings.HasPrefix(stream, promptTextPrefix) }

// TextHash is a text's content address: its SHA-256 in hex.
func TextHash(s string) string {
	// The system prompt is hashed at every turn: reading the string's
	// bytes in place (Sum256 neither keeps nor changes them) spares a copy
	// of several kilobytes each time.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
	return hex.EncodeToString(sum[:])
}

// TextPart is one piece of a text recorded by reference: inline text, a
// stored text named by its hash, or the turn's message.
type TextPart struct {
	Text    string `json:"t,omitempty"`
	Hash    string `json:"h,omitempty"`
	Message bool   `json:"m,omitempty"`
}

// TextPiece is one piece of a prompt as it is built: a section, a block
// or the separator between two. Stable pieces (prompt files, fixed rules)
// are the same from turn to turn.
type TextPiece struct {
	Text   string
	Stable bool
}

// MinStoredText is the length from which a piece that is not stable is
// stored once and referenced (a list of tasks, a profile); shorter ones
// (the time, the language line) change often and cost less inline.
const MinStoredText = 160

// maxGlue is the longest piece that joins two stable pieces into one
// stored text (the blank line between sections).
const maxGlue = 4

// splitText records pieces, which make up text, as parts: each run of
// stable pieces (with the separators between them) as one stored text,
// each other piece of at least MinStoredText bytes as a stored text of its
// own, a last piece equal to message as the message, the rest inline with
// neighbouring inline pieces merged. Stored texts are added to stored
// (hash -> text). Joining the parts gives text. Every text it stores or
// inlines is a slice of text: a turn's prompt, split at every turn, is not
// copied piece by piece.
func splitText(text string, pieces []TextPiece, message string, stored map[string]string) []TextPart {
	var parts []TextPart
	at := 0 // where pieces[i] starts in text
	for i := 0; i < len(pieces); i++ {
		p := pieces[i]
		start := at
		at += len(p.Text)
		switch {
		case p.Text == "":
		case i == len(pieces)-1 && p.Text == message && !p.Stable:
			parts = append(parts, TextPart{Message: true})
		case p.Stable:
			for i+2 < len(pieces) && pieces[i+2].Stable && len(pieces[i+1].Text) <= maxGlue {
				at += len(pieces[i+1].Text) + len(pieces[i+2].Text)
				i += 2
			}
			parts = append(parts, storedPart(text[start:at], stored))
		case len(p.Text) >= MinStoredText:
			parts = append(parts, storedPart(p.Text, stored))
		case len(parts) > 0 && parts[len(parts)-1].Hash == "" && !parts[len(parts)-1].Message:
			last := &parts[len(parts)-1]
			last.Text = text[start-len(last.Text) : at]
		default:
			parts = append(parts, TextPart{Text: p.Text})
		}
	}
	return parts
}

func storedPart(text string, stored map[string]string) TextPart {
	h := TextHash(text)
	stored[h] = text
	return TextPart{Hash: h}
}

// JoinText reassembles parts; lookup returns a stored text by its hash.
func JoinText(parts []TextPart, message string, lookup func(hash string) (string, error)) (string, error) {
	var b strings.Builder
	for _, p := range parts {
		switch {
		case p.Message:
			b.WriteString(message)
		case p.Hash != "":
			t, err := lookup(p.Hash)
			if err != nil {
				return "", err
			}
			if TextHash(t) != p.Hash {
				return "", fmt.Errorf("prompt text %s: content does not match its hash", p.Hash)
			}
			b.WriteString(t)
		default:
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// History references name a turn: "<turn>" for its user message then its
// reply, "<turn>/u" or "<turn>/a" for one of them. A turn id that is a
// UUID is written as its 16 bytes in base64url (22 characters instead of
// 36); any other id is written after a "~".
const (
	refUser      = "/u"
	refAssistant = "/a"
	refRaw       = "~"
)

// compactTurn is how a history reference writes a turn id.
func compactTurn(id string) string {
	if u, err := uuid.Parse(id); err == nil && u.String() == id {
		return base64.RawURLEncoding.EncodeToString(u[:])
	}
	return refRaw + id
}

// turnOfRef reads a turn id written by compactTurn.
func turnOfRef(ref string) string {
	if id, ok := strings.CutPrefix(ref, refRaw); ok {
		return id
	}
	b, err := base64.RawURLEncoding.DecodeString(ref)
	if err != nil || len(b) != 16 {
		return ref // not written by compactTurn: resolving it fails with its name
	}
	return uuid.UUID(b).String()
}

// historyRefs encodes a history whose messages all name their turn; false
// when one does not.
func historyRefs(history []HistoryMessage) ([]string, bool) {
	var refs []string
	for i := 0; i < len(history); i++ {
		h := history[i]
		if h.Turn == "" {
			return nil, false
		}
		turn := compactTurn(h.Turn)
		if h.Role == "user" && i+1 < len(history) && history[i+1].Role == "assistant" && history[i+1].Turn == h.Turn {
			refs = append(refs, turn)
			i++
			continue
		}
		switch h.Role {
		case "user":
			refs = append(refs, turn+refUser)
		case "assistant":
			refs = append(refs, turn+refAssistant)
		default:
			return nil, false
		}
	}
	return refs, true
}

// historyOf expands history references into messages without text.
func historyOf(refs []string) []HistoryMessage {
	out := make([]HistoryMessage, 0, 2*len(refs))
	for _, r := range refs {
		if turn, ok := strings.CutSuffix(r, refUser); ok {
			out = append(out, HistoryMessage{Role: "user", Turn: turnOfRef(turn)})
		} else if turn, ok := strings.CutSuffix(r, refAssistant); ok {
			out = append(out, HistoryMessage{Role: "assistant", Turn: turnOfRef(turn)})
		} else {
			turn := turnOfRef(r)
			out = append(out, HistoryMessage{Role: "user", Turn: turn}, HistoryMessage{Role: "assistant", Turn: turn})
		}
	}
	return out
}

// ByReference returns the context as recorded (schema 2) and the texts it
// references (hash -> text), which must be stored before it. received is
// the turn's message as received: a context message equal to it is not
// copied. A history whose messages all name their turn is recorded as
// those turns.
func (c ContextBuilt) ByReference(received string) (ContextBuilt, map[string]string) {
	stored := map[string]string{}
	ref := c
	ref.SystemParts = splitText(c.System, orPieces(c.SystemPieces, c.System), c.Message, stored)
	ref.PromptParts = nil
	if c.Prompt != c.Message {
		ref.PromptParts = splitText(c.Prompt, orPieces(c.PromptPieces, c.Prompt), c.Message, stored)
		if len(ref.PromptParts) == 0 {
			ref.PromptParts = []TextPart{{}} // an empty prompt, not the message
		}
	}
	ref.System, ref.Prompt, ref.SystemPieces, ref.PromptPieces = "", "", nil, nil
	if c.Message == received && c.Message != "" {
		ref.Message, ref.MessageAsReceived = "", true
	}
	if refs, ok := historyRefs(c.History); ok && len(refs) > 0 {
		ref.History, ref.HistoryTurns = nil, refs
	}
	return ref, stored
}

// orPieces is pieces when they make up text, else text as one piece.
func orPieces(pieces []TextPiece, text string) []TextPiece {
	if len(pieces) > 0 && makeUp(pieces, text) {
		return pieces
	}
	return []TextPiece{{Text: text}}
}

// makeUp tells whether the pieces' texts joined are text, without joining
// them (a turn's system prompt is checked so at every turn).
func makeUp(pieces []TextPiece, text string) bool {
	rest := text
	for _, p := range pieces {
		if !strings.HasPrefix(rest, p.Text) {
			return false
		}
		rest = rest[len(p.Text):]
	}
	return rest == ""
}

// Resolver finds what a context recorded by reference names.
type Resolver struct {
	// Text returns a stored prompt text by its hash.
	Text func(hash string) (string, error)
	// History returns a history message's text from its turn, as the
	// context gave it to the provider.
	History func(h HistoryMessage) (string, error)
	// Received returns the text of the context's own turn's message.
	Received func() (string, error)
}

// Resolve returns the context with its texts in full: Message, System,
// Prompt and every history message's text. A context recorded in full is
// returned as it is.
func (c ContextBuilt) Resolve(r Resolver) (ContextBuilt, error) {
	out := c
	var err error
	if c.MessageAsReceived {
		if out.Message, err = r.Received(); err != nil {
			return c, fmt.Errorf("message: %w", err)
		}
		out.MessageAsReceived = false
	}
	if len(c.SystemParts) > 0 {
		if out.System, err = JoinText(c.SystemParts, out.Message, r.Text); err != nil {
			return c, fmt.Errorf("system prompt: %w", err)
		}
	}
	switch {
	case len(c.PromptParts) > 0:
		if out.Prompt, err = JoinText(c.PromptParts, out.Message, r.Text); err != nil {
			return c, fmt.Errorf("prompt: %w", err)
		}
	case c.Prompt == "":
		out.Prompt = out.Message
	}
	history := c.History
	if len(c.HistoryTurns) > 0 {
		history = historyOf(c.HistoryTurns)
	}
	if len(history) > 0 {
		out.History = make([]HistoryMessage, len(history))
		for i, h := range history {
			if h.Turn != "" && h.Text == "" {
				if h.Text, err = r.History(h); err != nil {
					return c, fmt.Errorf("history message %d (%s of turn %s): %w", i+1, h.Role, h.Turn, err)
				}
			}
			out.History[i] = h
		}
	}
	out.SystemParts, out.PromptParts, out.HistoryTurns = nil, nil, nil
	return out, nil
}

// ByReferenceRecorded reports whether the context names texts it does not
// hold (it must be resolved before its prompt is used).
func (c ContextBuilt) ByReferenceRecorded() bool {
	if len(c.SystemParts) > 0 || len(c.PromptParts) > 0 || len(c.HistoryTurns) > 0 || c.MessageAsReceived {
		return true
	}
	for _, h := range c.History {
		if h.Turn != "" && h.Text == "" {
			return true
		}
	}
	return false
}

// Texts is the context in full as schema 1 recorded it: the texts, no
// references. Two contexts that gave a provider the same prompt have the
// same Texts.
func (c ContextBuilt) Texts() ContextBuilt {
	out := c
	out.SystemParts, out.PromptParts, out.SystemPieces, out.PromptPieces, out.HistoryTurns = nil, nil, nil, nil, nil
	out.MessageAsReceived = false
	if len(c.History) > 0 {
		out.History = make([]HistoryMessage, len(c.History))
		for i, h := range c.History {
			out.History[i] = HistoryMessage{Role: h.Role, Text: h.Text}
		}
	}
	return out
}

// contextBuiltV1ToV2 moves schema 1's full texts into schema 2's parts:
// the system prompt as one inline part, the prompt likewise unless it was
// the message itself.
func contextBuiltV1ToV2(data json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	var system, prompt, message string
	for key, dst := range map[string]*string{"system": &system, "prompt": &prompt, "message": &message} {
		if raw, ok := m[key]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	_, hadPrompt := m["prompt"]
	delete(m, "system")
	delete(m, "prompt")
	if system != "" {
		b, _ := json.Marshal([]TextPart{{Text: system}})
		m["system_parts"] = b
	}
	if hadPrompt && prompt != message {
		b, _ := json.Marshal([]TextPart{{Text: prompt}})
		m["prompt_parts"] = b
	}
	return json.Marshal(m)
}
