package markdown

import (
	"strings"
	"unicode/utf8"
)

// Chunk splits text (already in the platform's format) into messages of
// at most limit characters, preferring paragraph, then line, then word
// boundaries. A code block cut in two is
// closed at the end of one chunk and reopened in the next.
func Chunk(text string, limit int) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	const fenceCost = len("```\n") + len("\n```")
	if limit <= 2*fenceCost {
		limit = 2*fenceCost + 1
	}
	// Leave room for the fences added when a code block is split.
	pieces := splitPieces(text, limit-2*fenceCost)
	var chunks []string
	var cur strings.Builder
	curLen := 0
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			chunks = append(chunks, s)
		}
		cur.Reset()
		curLen = 0
	}
	for _, p := range pieces {
		n := utf8.RuneCountInString(p.text)
		if curLen > 0 && curLen+len(p.sep)+n > limit-2*fenceCost {
			flush()
		}
		if curLen > 0 {
			cur.WriteString(p.sep)
			curLen += len(p.sep)
		}
		cur.WriteString(p.text)
		curLen += n
	}
	flush()
	return balanceFences(chunks)
}

type piece struct {
	sep  string // separator that preceded this piece in the original
	text string
}

// splitPieces breaks text into pieces no longer than limit, keeping the
// separator each piece followed so that packing restores the layout.
func splitPieces(text string, limit int) []piece {
	var out []piece
	for i, para := range strings.Split(text, "\n\n") {
		sep := "\n\n"
		if i == 0 {
			sep = ""
		}
		out = append(out, splitBy(para, sep, limit, []string{"\n", " "})...)
	}
	return out
}

func splitBy(text, sep string, limit int, seps []string) []piece {
	if utf8.RuneCountInString(text) <= limit {
		return []piece{{sep, text}}
	}
	if len(seps) == 0 {
		return hardSplit(text, sep, limit)
	}
	var out []piece
	for i, part := range strings.Split(text, seps[0]) {
		s := seps[0]
		if i == 0 {
			s = sep
		}
		out = append(out, splitBy(part, s, limit, seps[1:])...)
	}
	return out
}

func hardSplit(text, sep string, limit int) []piece {
	var out []piece
	runes := []rune(text)
	for len(runes) > 0 {
		n := min(limit, len(runes))
		out = append(out, piece{sep, string(runes[:n])})
		runes = runes[n:]
		sep = ""
	}
	return out
}

// balanceFences closes a code block left open at the end of a chunk and
// reopens it at the start of the next.
func balanceFences(chunks []string) []string {
	open := false
	for i, c := range chunks {
		if open {
			c = "```\n" + c
		}
		for _, line := range strings.Split(chunks[i], "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				open = !open
			}
		}
		if open {
			c += "\n```"
		}
		chunks[i] = c
	}
	return chunks
}
