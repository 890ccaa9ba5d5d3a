package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
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
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TextPart is one piece of a text recorded by reference: inline text, a
// stored text named by its hash, or the turn's message.
type TextPart struct {
	Text    string `json:"t,omitempty"`
	Hash    string `json:"h,omitempty"`
	Message bool   `json:"m,omitempty"`
}

// MinStoredText is the length from which a piece is stored once and
// referenced; shorter pieces (the time, the language line) change often
// and cost less inline than a reference.
const MinStoredText = 160

// SplitText records pieces as parts: each piece of at least MinStoredText
// bytes by its hash (returned in stored, hash -> text), a last piece equal
// to message as the message, the rest inline with neighbouring inline
// pieces merged. Joining the parts gives the pieces' concatenation.
func SplitText(pieces []string, message string, stored map[string]string) []TextPart {
	var parts []TextPart
	for i, p := range pieces {
		switch {
		case p == "":
			continue
		case i == len(pieces)-1 && p == message:
			parts = append(parts, TextPart{Message: true})
		case len(p) >= MinStoredText:
			h := TextHash(p)
			stored[h] = p
			parts = append(parts, TextPart{Hash: h})
		case len(parts) > 0 && parts[len(parts)-1].Hash == "" && !parts[len(parts)-1].Message:
			parts[len(parts)-1].Text += p
		default:
			parts = append(parts, TextPart{Text: p})
		}
	}
	return parts
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

// ByReference returns the context as recorded (schema 2) and the texts it
// references (hash -> text), which must be stored before it. The history
// messages that name their turn keep only that reference; the others, and
// the context's short pieces, stay inline.
func (c ContextBuilt) ByReference() (ContextBuilt, map[string]string) {
	stored := map[string]string{}
	ref := c
	ref.SystemParts = SplitText(orPieces(c.SystemPieces, c.System), c.Message, stored)
	ref.PromptParts = nil
	if c.Prompt != c.Message {
		ref.PromptParts = SplitText(orPieces(c.PromptPieces, c.Prompt), c.Message, stored)
		if len(ref.PromptParts) == 0 {
			ref.PromptParts = []TextPart{{}} // an empty prompt, not the message
		}
	}
	ref.System, ref.Prompt, ref.SystemPieces, ref.PromptPieces = "", "", nil, nil
	ref.History = make([]HistoryMessage, len(c.History))
	for i, h := range c.History {
		if h.Turn != "" {
			h.Text = ""
		}
		ref.History[i] = h
	}
	if len(c.History) == 0 {
		ref.History = nil
	}
	return ref, stored
}

// orPieces is pieces when it makes up text, else text as one piece.
func orPieces(pieces []string, text string) []string {
	if strings.Join(pieces, "") == text && len(pieces) > 0 {
		return pieces
	}
	return []string{text}
}

// Resolver finds what a context recorded by reference names.
type Resolver struct {
	// Text returns a stored prompt text by its hash.
	Text func(hash string) (string, error)
	// History returns a history message's text from its turn, as the
	// context gave it to the provider.
	History func(h HistoryMessage) (string, error)
}

// Resolve returns the context with its texts in full: System, Prompt and
// every history message's text. A context recorded in full is returned
// as it is.
func (c ContextBuilt) Resolve(r Resolver) (ContextBuilt, error) {
	out := c
	var err error
	if len(c.SystemParts) > 0 {
		if out.System, err = JoinText(c.SystemParts, c.Message, r.Text); err != nil {
			return c, fmt.Errorf("system prompt: %w", err)
		}
	}
	switch {
	case len(c.PromptParts) > 0:
		if out.Prompt, err = JoinText(c.PromptParts, c.Message, r.Text); err != nil {
			return c, fmt.Errorf("prompt: %w", err)
		}
	case c.Prompt == "":
		out.Prompt = c.Message
	}
	if len(c.History) > 0 {
		out.History = make([]HistoryMessage, len(c.History))
		for i, h := range c.History {
			if h.Turn != "" && h.Text == "" {
				if h.Text, err = r.History(h); err != nil {
					return c, fmt.Errorf("history message %d (%s of turn %s): %w", i+1, h.Role, h.Turn, err)
				}
			}
			out.History[i] = h
		}
	}
	return out, nil
}

// ByReferenceRecorded reports whether the context names texts it does not
// hold (it must be resolved before its prompt is used).
func (c ContextBuilt) ByReferenceRecorded() bool {
	if len(c.SystemParts) > 0 || len(c.PromptParts) > 0 {
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
	out.SystemParts, out.PromptParts, out.SystemPieces, out.PromptPieces = nil, nil, nil, nil
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
