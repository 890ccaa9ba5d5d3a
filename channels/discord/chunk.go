package discord

import "strings"

// Chunk splits text into messages of at most limit bytes (so at most
// limit characters), preferring paragraph, then line, then word
// boundaries. A code block cut in two is closed at the end of one chunk
// and reopened, with its language, at the start of the next.
func Chunk(text string, limit int) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	// Room for the fences a cut code block gets: "```" + a language of up
	// to 16 bytes + "\n" before, "\n```" after.
	const fenceCost = 3 + 16 + 1 + 4
	budget := max(limit-fenceCost, 1)
	var chunks []string
	var cur strings.Builder
	for _, p := range pieces(text, budget) {
		if cur.Len() > 0 && cur.Len()+len(p.sep)+len(p.text) > budget {
			chunks = appendChunk(chunks, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteString(p.sep)
		}
		cur.WriteString(p.text)
	}
	chunks = appendChunk(chunks, cur.String())
	return balanceFences(chunks)
}

func appendChunk(chunks []string, s string) []string {
	if s = strings.TrimSpace(s); s != "" {
		chunks = append(chunks, s)
	}
	return chunks
}

type piece struct {
	sep  string // what preceded the piece in the text
	text string
}

// pieces breaks text into pieces of at most limit bytes at paragraph,
// line, word and finally character boundaries.
func pieces(text string, limit int) []piece {
	return splitBy(text, "", limit, []string{"\n\n", "\n", " "})
}

func splitBy(text, sep string, limit int, seps []string) []piece {
	if len(text) <= limit {
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

// hardSplit cuts a word longer than limit on rune boundaries.
func hardSplit(text, sep string, limit int) []piece {
	var out []piece
	for len(text) > 0 {
		n := min(limit, len(text))
		for n > 0 && n < len(text) && !startsRune(text[n]) {
			n--
		}
		out = append(out, piece{sep, text[:n]})
		text, sep = text[n:], ""
	}
	return out
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// balanceFences closes a code block left open at the end of a chunk and
// reopens it with the same language at the start of the next.
func balanceFences(chunks []string) []string {
	opener := ""
	for i, c := range chunks {
		if opener != "" {
			c = opener + "\n" + c
		}
		for _, line := range strings.Split(chunks[i], "\n") {
			t := strings.TrimSpace(line)
			if !strings.HasPrefix(t, "```") {
				continue
			}
			if opener == "" {
				opener = fence(t)
			} else {
				opener = ""
			}
		}
		if opener != "" {
			c += "\n```"
		}
		chunks[i] = c
	}
	return chunks
}

// fence is the opening fence to repeat: the language kept if short.
func fence(line string) string {
	if lang := strings.TrimPrefix(line, "```"); len(lang) <= 16 && !strings.Contains(lang, "`") {
		return "```" + lang
	}
	return "```"
}
