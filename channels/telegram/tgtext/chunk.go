package tgtext

import (
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxMessageLen is Telegram's message limit in UTF-16 code units.
const MaxMessageLen = 4096

// token is an indivisible piece of HTML: a tag, an entity or one rune.
type token struct {
	s    string
	kind tokenKind
	name string // tag name for tags
	len  int    // UTF-16 code units
}

type tokenKind int

const (
	tokText tokenKind = iota
	tokOpen
	tokClose
)

// UTF16Len is the length of s in UTF-16 code units, the unit of
// Telegram's message and caption limits.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

func tokenize(s string) []token {
	toks := make([]token, 0, len(s))
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				raw := s[i : i+end+1]
				toks = append(toks, tagToken(raw))
				i += end + 1
				continue
			}
		case '&':
			if end := strings.IndexByte(s[i:], ';'); end > 0 && end < 12 {
				raw := s[i : i+end+1]
				toks = append(toks, token{s: raw, kind: tokText, len: UTF16Len(raw)})
				i += end + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size]
		toks = append(toks, token{s: raw, kind: tokText, len: UTF16Len(raw)})
		i += size
	}
	return toks
}

func tagToken(raw string) token {
	t := token{s: raw, kind: tokOpen, len: UTF16Len(raw)}
	body := strings.Trim(raw, "<>")
	if strings.HasPrefix(body, "/") {
		t.kind = tokClose
		body = body[1:]
	}
	t.name, _, _ = strings.Cut(body, " ")
	return t
}

// Chunk splits well-formed Telegram HTML into pieces of at most limit
// UTF-16 code units (tags included, which is conservative). Tags open at
// a cut are closed at the end of one piece and reopened at the start of
// the next, so every piece is well-formed on its own. Cuts prefer line
// breaks outside code blocks, then line breaks inside them, then spaces.
func Chunk(s string, limit int) []string {
	toks := tokenize(s)
	var chunks []string
	var stack []token // open tags at the current position
	c := newChunkState(nil)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := applyTag(stack, t)
		if c.len+t.len+closeLen(next) > limit && c.hasContent() {
			at := c.bestCut()
			chunks = append(chunks, c.render(at))
			rest := c.toks[at.at:]
			stack = at.stack
			c = newChunkState(at.stack)
			for _, r := range rest {
				c.add(r, applyTag(stack, r))
				stack = applyTag(stack, r)
			}
			next = applyTag(stack, t)
		}
		c.add(t, next)
		stack = next
	}
	if c.hasContent() {
		chunks = append(chunks, c.render(cut{at: len(c.toks), stack: stack}))
	}
	return chunks
}

type cut struct {
	at    int     // index into chunkState.toks
	stack []token // open tags at that point
}

type chunkState struct {
	prefix []token // tags reopened from the previous chunk
	toks   []token
	len    int
	// Best cut candidates seen so far.
	lineOutsidePre, lineInsidePre, space cut
}

func newChunkState(reopen []token) *chunkState {
	c := &chunkState{prefix: reopen}
	for _, t := range reopen {
		c.len += t.len
	}
	return c
}

func (c *chunkState) hasContent() bool {
	for _, t := range c.toks {
		if t.kind == tokText && strings.TrimSpace(t.s) != "" {
			return true
		}
	}
	return false
}

func (c *chunkState) add(t token, stackAfter []token) {
	if len(c.toks) == 0 && t.s == "\n" && !inPre(stackAfter) {
		return // do not start a chunk with a blank line
	}
	c.toks = append(c.toks, t)
	c.len += t.len
	candidate := cut{at: len(c.toks), stack: stackAfter}
	switch {
	case t.s == "\n" && !inPre(stackAfter):
		c.lineOutsidePre = candidate
	case t.s == "\n":
		c.lineInsidePre = candidate
	case t.s == " ":
		c.space = candidate
	}
}

func (c *chunkState) bestCut() cut {
	for _, candidate := range []cut{c.lineOutsidePre, c.lineInsidePre, c.space} {
		if candidate.at > 0 && c.hasContentBefore(candidate.at) {
			return candidate
		}
	}
	return cut{at: len(c.toks), stack: c.stackAt(len(c.toks))}
}

func (c *chunkState) hasContentBefore(at int) bool {
	for _, t := range c.toks[:at] {
		if t.kind == tokText && strings.TrimSpace(t.s) != "" {
			return true
		}
	}
	return false
}

func (c *chunkState) stackAt(at int) []token {
	stack := append([]token(nil), c.prefix...)
	for _, t := range c.toks[:at] {
		stack = applyTag(stack, t)
	}
	return stack
}

func (c *chunkState) render(at cut) string {
	var b strings.Builder
	for _, t := range c.prefix {
		b.WriteString(t.s)
	}
	for _, t := range c.toks[:at.at] {
		b.WriteString(t.s)
	}
	for i := len(at.stack) - 1; i >= 0; i-- {
		b.WriteString("</" + at.stack[i].name + ">")
	}
	return b.String()
}

// applyTag returns the open-tag stack after t, without mutating stack.
func applyTag(stack []token, t token) []token {
	switch t.kind {
	case tokOpen:
		next := make([]token, len(stack), len(stack)+1)
		copy(next, stack)
		return append(next, t)
	case tokClose:
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].name == t.name {
				return stack[:i:i]
			}
		}
	}
	return stack
}

func closeLen(stack []token) int {
	n := 0
	for _, t := range stack {
		n += len(t.name) + 3
	}
	return n
}

func inPre(stack []token) bool {
	for _, t := range stack {
		if t.name == "pre" {
			return true
		}
	}
	return false
}

// HTMLToPlain strips tags and unescapes entities; links keep their target
// in parentheses. It is the fallback when Telegram rejects the entities.
func HTMLToPlain(s string) string {
	var b strings.Builder
	var href string
	var label strings.Builder
	for _, t := range tokenize(s) {
		switch t.kind {
		case tokOpen:
			if t.name == "a" {
				href = attr(t.s, "href")
				label.Reset()
			}
		case tokClose:
			if t.name == "a" && href != "" && label.String() != href {
				b.WriteString(" (" + href + ")")
			}
			if t.name == "a" {
				href = ""
			}
		default:
			text := html.UnescapeString(t.s)
			b.WriteString(text)
			label.WriteString(text)
		}
	}
	return b.String()
}

func attr(tag, name string) string {
	_, rest, ok := strings.Cut(tag, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(v)
}
