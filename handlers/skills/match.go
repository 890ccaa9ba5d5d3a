package skills

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matches reports whether message contains one of the triggers as a whole
// word or phrase, ignoring case: "git" matches "Git status?" but not
// "digital".
func Matches(message string, triggers []string) bool {
	msg := strings.ToLower(message)
	for _, t := range triggers {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && containsWord(msg, t) {
			return true
		}
	}
	return false
}

// containsWord reports whether phrase occurs in s with no letter or digit
// right before or after it.
func containsWord(s, phrase string) bool {
	for from := 0; from <= len(s)-len(phrase); {
		j := strings.Index(s[from:], phrase)
		if j < 0 {
			return false
		}
		at, end := from+j, from+j+len(phrase)
		if boundary(s[:at], true) && boundary(s[end:], false) {
			return true
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		from = at + size
	}
	return false
}

// boundary reports whether the text next to a match (before it when
// before is set, else after it) does not continue a word.
func boundary(s string, before bool) bool {
	if s == "" {
		return true
	}
	var r rune
	if before {
		r, _ = utf8.DecodeLastRuneInString(s)
	} else {
		r, _ = utf8.DecodeRuneInString(s)
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}
