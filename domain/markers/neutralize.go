package markers

import (
	"reflect"
	"strings"
	"time"
)

// wordJoiner (U+2060) is invisible and keeps the text readable for the
// model and for people, but it is not a word character for the parser:
// "S\u2060CHEDULE\u2060:" is two ordinary words and a colon.
const wordJoiner = "\u2060"

// Neutralize makes marker-shaped text inert: every known marker name gets
// a word joiner after its first letter, and every marker-shaped word
// (known, or NAME_LIKE_THIS) one before a following ':'. Parsing the
// result, even after a model repeats it verbatim, yields no marker and no
// invalid marker. Apply it to everything that reaches the model and is not
// the model's own reply: the user's message, document text, tool output.
// Removing the word joiners gives back the input.
func Neutralize(text string) string {
	if !strings.ContainsFunc(text, func(r rune) bool { return r == '_' || r >= 'A' && r <= 'Z' }) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 16)
	for i := 0; i < len(text); {
		if !isWordByte(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		start := i
		for i < len(text) && isWordByte(text[i]) {
			i++
		}
		neutralizeWord(&b, text[start:i], i < len(text) && text[i] == ':')
	}
	return b.String()
}

// neutralizeWord writes word, split after its first letter when it names
// a marker and followed by a word joiner when it is marker-shaped and
// colon says a ':' comes next.
func neutralizeWord(b *strings.Builder, word string, colon bool) {
	name := strings.Trim(word, "_")
	// SILENT is a marker only as a whole line, but splitting it anywhere
	// is harmless and simpler than finding its line.
	known := name != "" && (kindOf(name) != unknownName || name == NameSilent)
	if !known && (!colon || !looksLikeMarker(name)) {
		b.WriteString(word)
		return
	}
	if known {
		lead := strings.Index(word, name)
		b.WriteString(word[:lead+1])
		b.WriteString(wordJoiner)
		b.WriteString(word[lead+1:])
	} else {
		b.WriteString(word)
	}
	if colon {
		b.WriteString(wordJoiner)
	}
}

// EchoFilter returns a test for markers that repeat one the input already
// contained: a model that echoes marker-shaped text from the user (after
// undoing Neutralize, say) must not make it an instruction to omega. The
// comparison is by parsed value, so spacing or emphasis does not matter.
func EchoFilter(input string, loc *time.Location) func(Marker) bool {
	shaped := ParseIn(input, loc).Markers
	return func(m Marker) bool {
		for _, s := range shaped {
			if reflect.DeepEqual(s, m) {
				return true
			}
		}
		return false
	}
}
