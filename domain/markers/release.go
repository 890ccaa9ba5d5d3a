package markers

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Release shows a reply while it is written without ever showing a
// marker: fed the reply in pieces, it gives the visible text up to the
// point where no marker can still be in progress. It strips with the same
// rules as Parse, line by line; a complete line is decided, and of the
// line being written only the part before anything that could still turn
// into a marker is shown: the last word (it may grow into a name, or be
// followed by ':'), markdown wrappers before it, everything after a marker
// that takes a value, and a line that could still be SILENT or only a
// list bullet. So every text Write returns is a prefix of Text's, and
// Text equals Parse(reply).Text. A Release is not safe for concurrent use.
type Release struct {
	s       stripper
	kept    int             // lines of s.out already in joined
	joined  strings.Builder // the kept lines, joined by "\n"
	partial strings.Builder // the line being written
	shown   string
}

// Write adds delta to the reply and returns the text that may be shown
// now, and whether it grew since the last call.
func (r *Release) Write(delta string) (string, bool) {
	for {
		i := strings.IndexByte(delta, '\n')
		if i < 0 {
			break
		}
		r.partial.WriteString(delta[:i])
		r.endLine()
		delta = delta[i+1:]
	}
	r.partial.WriteString(delta)
	visible := r.text(decidedPrefix(r.partial.String(), r.s.inFence))
	if len(visible) <= len(r.shown) {
		return r.shown, false
	}
	r.shown = visible
	return visible, true
}

// Text returns the whole reply's visible text, once it is complete.
func (r *Release) Text() string {
	r.endLine()
	return r.text("")
}

// endLine strips the line being written as a complete line.
func (r *Release) endLine() {
	if r.s.p.loc == nil {
		r.s.p.loc = time.UTC // the markers found are not used, only the text
	}
	r.s.feed(r.partial.String())
	r.partial.Reset()
	for ; r.kept < len(r.s.out); r.kept++ {
		if r.kept > 0 {
			r.joined.WriteByte('\n')
		}
		r.joined.WriteString(r.s.out[r.kept])
	}
}

// text is the visible reply: the kept lines and what may be shown of the
// line being written.
func (r *Release) text(line string) string {
	all := r.joined.String()
	if line != "" {
		if r.kept > 0 {
			all += "\n"
		}
		all += line
	}
	return strings.TrimSpace(all)
}

// decidedPrefix returns what Parse will keep of the start of a line whose
// end is not written yet: the text before anything that could still
// become a marker, or nothing while the line could still be dropped.
func decidedPrefix(line string, inFence bool) string {
	line = line[:completeRunes(line)]
	cut := len(line)
	for cut > 0 && isWordByte(line[cut-1]) {
		cut-- // the last word may grow, or be followed by ':'
	}
	cut = wrapperBefore(line, 0, cut)
	var segs []string
	pos := 0
	for _, h := range findHits(line, inFence) {
		if h.start >= cut {
			break
		}
		lead := wrapperBefore(line, pos, h.start)
		segs = append(segs, line[pos:lead])
		if h.takesValue() {
			// The rest of the line is this marker's value, or the
			// values of the markers after it.
			pos = len(line)
			break
		}
		pos = wrapperAfter(line, h.end)
	}
	if pos < cut {
		segs = append(segs, line[pos:cut])
	}
	kept := joinSegments(segs)
	if mayBeSilent(kept) || mayBeResidue(kept) {
		return ""
	}
	return kept
}

// completeRunes returns the length of s without a trailing incomplete
// UTF-8 sequence, which the next piece completes.
func completeRunes(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return i
			}
			break
		}
	}
	return len(s)
}

// mayBeSilent reports whether a line starting with kept could still be
// a SILENT line.
func mayBeSilent(kept string) bool {
	t := strings.TrimFunc(kept, func(r rune) bool {
		return unicode.IsSpace(r) || r == '*' || r == '_' || r == '`'
	})
	return strings.HasPrefix(NameSilent, t)
}

// mayBeResidue reports whether a line starting with kept could still be
// dropped as the residue of a stripped marker: it has nothing but
// characters a residue is made of.
func mayBeResidue(kept string) bool {
	return !strings.ContainsFunc(kept, func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-*+•>#`_~|.)", r)
	})
}
