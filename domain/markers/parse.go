// Package markers parses the marker protocol: the instructions a provider
// embeds in its reply (SCHEDULE:, LANG_SWITCH:, HEARTBEAT_OK, ...), and
// strips them so that no protocol text ever reaches a user.
//
// Recognition rules, applied line by line:
//
//   - A marker name is a word: a maximal run of ASCII letters, digits and
//     '_', with any leading or trailing '_' ignored (markdown emphasis such
//     as __HEARTBEAT_OK__). Names are case-sensitive, so "Schedule:" or
//     "schedule:" in prose is never a marker. A marker may start a line or
//     sit mid-sentence ("Sure! SCHEDULE: Call Juan | ... | once").
//   - A valued marker is a known name immediately followed by ':'. Its
//     value runs to the next colon marker on the same line, or to the end
//     of the line. A known name containing '_' but missing its ':'
//     ("CANCEL_TASK abc") is stripped the same way and reported invalid.
//   - A bare marker (HEARTBEAT_OK, PURGE_FACTS, ...) is the known name as
//     a word on its own; with a trailing ':' the rest of the value is
//     ignored. Markdown wrappers made of '*' or '`' around it are removed.
//   - SILENT is an ordinary word, so it is a marker only when it is the
//     whole line (after the other markers are stripped).
//   - Safety net: any other upper-case word containing '_' and followed
//     by ':' (FOO_BAR:) is treated as an unknown marker: stripped with its
//     value and reported invalid. Words without '_' (NOTE:, URL:, TODO:)
//     are left alone. Inside fenced code blocks the net is off, so code
//     such as "DATABASE_URL: postgres://..." survives; known names are
//     still stripped there.
//
// Stripping never leaves trailing spaces, a lone list bullet, or a run of
// blank lines where a marker was; the result is trimmed. Parsing the
// stripped text again yields the same text and no markers.
package markers

import (
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Result is what a reply contains: its markers in the order written, the
// text to show the user, and the markers that were recognised but could
// not be used.
type Result struct {
	Markers []Marker
	Text    string
	Invalid []Invalid
}

// Invalid is a marker that was stripped but not understood: a known name
// with a bad value, or an unknown NAME_LIKE_THIS: prefix.
type Invalid struct {
	Name   string // protocol name as written, e.g. "SCHEDULE" or "FOO_BAR"
	Raw    string // the stripped marker text, for the record
	Reason string
}

// Parse parses reply, reading datetimes without an offset as UTC: the
// scheduling prompt tells the provider to convert times to UTC before it
// emits a marker.
func Parse(reply string) Result {
	return ParseIn(reply, time.UTC)
}

// ParseIn parses reply, reading datetimes without an offset as wall-clock
// time in loc (nil means UTC).
func ParseIn(reply string, loc *time.Location) Result {
	if loc == nil {
		loc = time.UTC
	}
	s := stripper{p: parser{loc: loc}}
	for _, line := range strings.Split(reply, "\n") {
		s.feed(line)
	}
	s.p.res.Text = strings.TrimSpace(strings.Join(s.out, "\n"))
	return s.p.res
}

// stripper strips a reply line by line; what it keeps of a line never
// depends on the lines after it, which is what lets Release show a reply
// while it is still being written.
type stripper struct {
	p       parser
	out     []string
	removed bool // a line was dropped since the last kept line
	inFence bool
}

// feed strips one line and keeps what is left of it, if anything.
func (s *stripper) feed(line string) {
	// CRLF (and stray CRs before the newline) become LF.
	line = strings.TrimRight(line, "\r")
	kept, changed := s.p.line(line, s.inFence)
	if changed && isResidue(kept) {
		s.removed = true
		return
	}
	if isSilentLine(kept) {
		s.p.res.Markers = append(s.p.res.Markers, s.p.bare(NameSilent))
		s.removed = true
		return
	}
	if isFence(kept) {
		s.inFence = !s.inFence
	}
	if s.removed && isBlank(kept) && len(s.out) > 0 && isBlank(s.out[len(s.out)-1]) {
		return
	}
	s.out = append(s.out, kept)
	s.removed = false
}

type parser struct {
	loc *time.Location
	res Result
}

// hit is a marker name found in a line.
type hit struct {
	start, end int    // the word, line[start:end]
	name       string // the word without surrounding '_'
	kind       kind   // unknownName for the safety net
	colon      bool   // followed by ':'
}

// takesValue reports whether the hit consumes text after it.
func (h hit) takesValue() bool { return h.colon || h.kind == valued }

// line strips the markers of one line, recording them, and returns what
// is left and whether anything was stripped.
func (p *parser) line(line string, inFence bool) (string, bool) {
	hits := findHits(line, inFence)
	if len(hits) == 0 {
		return line, false
	}
	var segs []string
	pos := 0
	for i, h := range hits {
		if h.start < pos {
			continue // inside the previous marker's value
		}
		lead := wrapperBefore(line, pos, h.start)
		segs = append(segs, line[pos:lead])
		if !h.takesValue() {
			p.res.Markers = append(p.res.Markers, p.bare(h.name))
			pos = wrapperAfter(line, h.end)
			continue
		}
		end := len(line)
		for _, next := range hits[i+1:] {
			if next.colon {
				end = wrapperBefore(line, h.end, next.start)
				break
			}
		}
		p.record(h, line[h.start:h.end], line[lead:h.start], line[h.end:end])
		pos = end
	}
	segs = append(segs, line[pos:])
	return joinSegments(segs), true
}

// record turns one valued (or unknown) hit into a marker or an Invalid.
// rest is the text after the name, starting at the ':' if any.
func (p *parser) record(h hit, word, wrapper, rest string) {
	raw := strings.TrimSpace(word + rest)
	value, hasColon := strings.CutPrefix(rest, ":")
	if !hasColon {
		p.invalid(h.name, raw, "missing ':' after marker name")
		return
	}
	if h.kind == unknownName {
		p.invalid(h.name, raw, "unknown marker")
		return
	}
	if h.kind == bare {
		p.res.Markers = append(p.res.Markers, p.bare(h.name))
		return
	}
	value = strings.TrimSpace(unwrap(value, wrapper))
	m, err := parseMarker(h.name, value, p.loc)
	if err != nil {
		p.invalid(h.name, raw, err.Error())
		return
	}
	p.res.Markers = append(p.res.Markers, m)
}

// bare returns the marker of a bare name; its parser ignores the value.
func (p *parser) bare(name string) Marker {
	m, _ := parseMarker(name, "", p.loc)
	return m
}

func (p *parser) invalid(name, raw, reason string) {
	p.res.Invalid = append(p.res.Invalid, Invalid{Name: name, Raw: raw, Reason: reason})
}

// findHits lists the marker words of a line, left to right.
func findHits(line string, inFence bool) []hit {
	var hits []hit
	for i := 0; i < len(line); {
		if !isWordByte(line[i]) {
			i++
			continue
		}
		start := i
		for i < len(line) && isWordByte(line[i]) {
			i++
		}
		h := hit{start: start, end: i, name: strings.Trim(line[start:i], "_")}
		h.colon = i < len(line) && line[i] == ':'
		h.kind = kindOf(h.name)
		switch {
		case h.kind == valued && (h.colon || strings.Contains(h.name, "_")):
		case h.kind == bare:
		case h.kind == unknownName && h.colon && !inFence && looksLikeMarker(h.name):
		default:
			continue
		}
		hits = append(hits, h)
	}
	return hits
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// looksLikeMarker matches upper-case words joined by underscores, such as
// BUILD_PROPOSAL or ISO_8601.
var markerLike = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)

func looksLikeMarker(name string) bool { return markerLike.MatchString(name) }

func isWrapperByte(c byte) bool { return c == '*' || c == '`' }

// wrapperBefore returns where the run of markdown wrapper characters
// directly before line[at] begins, not going back past floor.
func wrapperBefore(line string, floor, at int) int {
	for at > floor && isWrapperByte(line[at-1]) {
		at--
	}
	return at
}

// wrapperAfter returns the index just past the run of markdown wrapper
// characters that starts at line[at].
func wrapperAfter(line string, at int) int {
	for at < len(line) && isWrapperByte(line[at]) {
		at++
	}
	return at
}

// unwrap removes markdown emphasis around a marker's value: "**NAME:**
// value" leaves "** value" and "**NAME: value**" leaves "value**".
func unwrap(value, wrapper string) string {
	trimmed := strings.TrimLeft(value, "*`")
	if len(trimmed) != len(value) {
		value = trimmed // wrapper glued to the colon
	} else if wrapper != "" {
		value = strings.TrimSuffix(strings.TrimSpace(value), wrapper)
	}
	return strings.TrimSpace(value)
}

// joinSegments glues the text around stripped markers back together with
// single spaces, or none before punctuation. Leading indentation of the
// line survives; trailing whitespace does not.
func joinSegments(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
		if i > 0 || strings.TrimSpace(s) == "" {
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		}
		if s == "" {
			continue
		}
		if b.Len() > 0 && !strings.ContainsRune(".,!?;)", rune(s[0])) {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}

// residue matches what a stripped line may leave that is no use on its
// own once whitespace is removed: a list bullet or number, a quote mark,
// emphasis.
var residue = regexp.MustCompile(`^[-*+•>#` + "`" + `_~|]*(?:\d+[.)][-*+•>#` + "`" + `_~|]*)?$`)

func isResidue(s string) bool { return residue.MatchString(dropSpace(s)) }

func dropSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// isSilentLine reports a line that is SILENT alone, perhaps emphasised.
func isSilentLine(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '*' || r == '_' || r == '`'
	}) == NameSilent
}

func isFence(s string) bool {
	s = strings.TrimLeft(s, " \t")
	return strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~")
}
