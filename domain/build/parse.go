package build

import (
	"strings"
)

// Verdict is a verifier's judgement parsed from its reply.
type Verdict struct {
	Passed bool
	Reason string
}

// ParseVerdict reads the line "VERDICT: pass" or "VERDICT: fail <why>"
// (case does not matter; the last such line counts). A reply without one
// fails: a verifier that cannot say it passed has not passed.
func ParseVerdict(reply string) Verdict {
	v := Verdict{Reason: "the reply has no VERDICT: line"}
	for _, line := range strings.Split(reply, "\n") {
		rest, ok := cutPrefixFold(strings.TrimSpace(line), "VERDICT:")
		if !ok {
			continue
		}
		word, why, _ := strings.Cut(strings.TrimSpace(rest), " ")
		switch strings.ToLower(strings.Trim(word, ".:;,")) {
		case "pass", "passed", "ok", "clean":
			v = Verdict{Passed: true}
		default:
			v = Verdict{Reason: strings.TrimSpace(strings.TrimSpace(word + " " + why))}
		}
	}
	return v
}

// ParseSummary is the final summary of a delivery reply: what follows a
// "SUMMARY:" line, else the whole reply, trimmed.
func ParseSummary(reply string) string {
	if i := indexFold(reply, "SUMMARY:"); i >= 0 {
		return strings.TrimSpace(reply[i+len("SUMMARY:"):])
	}
	return strings.TrimSpace(reply)
}

// ParseBrief is an analyst's brief: what follows "BRIEF:", else the
// reply's first paragraph.
func ParseBrief(reply string) string {
	if i := indexFold(reply, "BRIEF:"); i >= 0 {
		return strings.TrimSpace(reply[i+len("BRIEF:"):])
	}
	first, _, _ := strings.Cut(strings.TrimSpace(reply), "\n\n")
	return first
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToUpper(s), strings.ToUpper(sub))
}

// NameFor derives a build's folder name from the request and the id:
// the request's first words as a slug, and the id's first characters so
// that two builds of one request never share a folder.
func NameFor(request, id string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(request) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 32 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "build"
	}
	short := id
	if len(short) > 8 {
		short = short[:8]
	}
	return slug + "-" + short
}
