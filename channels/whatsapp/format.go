package whatsapp

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxChunk is well below WhatsApp's hard limit (~65 000 characters):
// long walls of text are unreadable on a phone, and smaller messages
// arrive sooner.
const maxChunk = 4000

var (
	reFence     = regexp.MustCompile("^\\s*(```|~~~)")
	reHeader    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	reBullet    = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	reTableSep  = regexp.MustCompile(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	reRule      = regexp.MustCompile(`^\s*([-*_])(\s*([-*_])){2,}\s*$`)
	reCodeSpan  = regexp.MustCompile("`[^`\n]+`")
	reLink      = regexp.MustCompile(`!?\[([^\]\n]*)\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	reURL       = regexp.MustCompile(`https?://[^\s<>()]+`)
	reBoldStar  = regexp.MustCompile(`\*\*([^\s*](?:[^*\n]*[^\s*])?)\*\*`)
	reBoldUnder = regexp.MustCompile(`__([^\s_](?:[^_\n]*[^\s_])?)__`)
	reItalic    = regexp.MustCompile(`(^|[^*\w])\*([^\s*](?:[^*\n]*[^\s*])?)\*([^*\w]|$)`)
	reStrike    = regexp.MustCompile(`~~([^~\n]+)~~`)
	rePlacehold = regexp.MustCompile("\x00(\\d+)\x00")
)

// Markers standing for WhatsApp's bold and italic delimiters while the
// Markdown ones are still being rewritten; control characters never occur
// in model output.
const (
	boldMark   = "\x01"
	italicMark = "\x02"
)

// ToWhatsApp rewrites the model's Markdown into WhatsApp's formatting:
// *bold*, _italic_, ~strike~ and ``` blocks. Headers become bold lines,
// tables become bullet lines and links show their address, since WhatsApp
// renders none of them.
func ToWhatsApp(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	inCode := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if reFence.MatchString(line) {
			// WhatsApp would print a language tag literally.
			inCode = !inCode
			out = append(out, "```")
			continue
		}
		if inCode {
			out = append(out, line)
			continue
		}
		if isTableRow(line) {
			j := i
			for j < len(lines) && isTableRow(lines[j]) {
				j++
			}
			out = append(out, convertTable(lines[i:j])...)
			i = j - 1
			continue
		}
		out = append(out, convertLine(line))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func convertLine(line string) string {
	if m := reHeader.FindStringSubmatch(line); m != nil {
		return boldLine(m[1])
	}
	if reRule.MatchString(line) {
		return "──────────"
	}
	if m := reBullet.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + convertInline(m[2])
	}
	return convertInline(line)
}

// boldLine renders text as one bold line; emphasis inside it is dropped
// because WhatsApp cannot nest it.
func boldLine(text string) string {
	text = strings.NewReplacer("**", "", "__", "").Replace(text)
	text = strings.Trim(convertInline(text), "*_ ")
	if text == "" {
		return ""
	}
	return "*" + text + "*"
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) > 1 && strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

// convertTable turns a Markdown table into "• a — b" lines, the header
// row (the one above the |---| separator) into a bold line.
func convertTable(rows []string) []string {
	var out []string
	for i, row := range rows {
		if reTableSep.MatchString(row) {
			continue
		}
		cells := tableCells(row)
		if len(cells) == 0 {
			continue
		}
		joined := strings.Join(cells, " — ")
		if i == 0 && len(rows) > 1 && reTableSep.MatchString(rows[1]) {
			out = append(out, boldLine(joined))
			continue
		}
		out = append(out, "• "+convertInline(joined))
	}
	return out
}

func tableCells(row string) []string {
	t := strings.Trim(strings.TrimSpace(row), "|")
	var cells []string
	for c := range strings.SplitSeq(t, "|") {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	return cells
}

// convertInline rewrites emphasis and links in one line. Code spans and
// URLs are set aside first so that their underscores and asterisks are
// never taken for emphasis.
func convertInline(s string) string {
	var kept []string
	keep := func(v string) string {
		kept = append(kept, v)
		return "\x00" + strconv.Itoa(len(kept)-1) + "\x00"
	}
	s = reCodeSpan.ReplaceAllStringFunc(s, keep)
	s = reLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := reLink.FindStringSubmatch(m)
		text, url := strings.TrimSpace(sub[1]), sub[2]
		if text == "" || text == url {
			return keep(url)
		}
		return text + " (" + keep(url) + ")"
	})
	s = reURL.ReplaceAllStringFunc(s, keep)

	s = reBoldStar.ReplaceAllString(s, boldMark+"$1"+boldMark)
	s = reBoldUnder.ReplaceAllString(s, italicMark+"$1"+italicMark)
	// Twice: a match consumes the character after it, which may be the
	// one that opens the next emphasis ("*a* *b*").
	for range 2 {
		s = reItalic.ReplaceAllString(s, "${1}"+italicMark+"${2}"+italicMark+"${3}")
	}
	s = reStrike.ReplaceAllString(s, "~$1~")
	s = strings.NewReplacer(boldMark, "*", italicMark, "_").Replace(s)

	return rePlacehold.ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(strings.Trim(m, "\x00"))
		return kept[i]
	})
}

// Chunk splits text into messages of at most limit characters, preferring
// paragraph, then line, then word boundaries. A code block cut in two is
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
