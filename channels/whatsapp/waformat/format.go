// Package waformat is WhatsApp's text format: the model's Markdown in
// WhatsApp's formatting, cut into messages on paragraph, line and word
// boundaries with code blocks closed and reopened at a cut.
package waformat

import (
	"strings"
	"unicode/utf8"

	"github.com/omega-gateway/omega/channels/markdown"
)

// MaxChunk is well below WhatsApp's hard limit (~65 000 characters):
// long walls of text are unreadable on a phone, and smaller messages
// arrive sooner.
const MaxChunk = 4000

// waStyle renders the Markdown tree (parsed by goldmark in
// channels/markdown, as for every channel) in WhatsApp's formatting:
// *bold*, _italic_, ~strike~, `inline`, ``` blocks (without a language,
// which WhatsApp would print), "> " quotes and "• " items. Headings are
// bold lines without inner emphasis (WhatsApp cannot nest it), tables
// "• a — b" lines under a bold header, and links show their address.
var waStyle = markdown.Style{
	Text:         func(s string) string { return s },
	Bold:         markdown.Pair{Open: "*", Close: "*"},
	Italic:       markdown.Pair{Open: "_", Close: "_"},
	Strike:       markdown.Pair{Open: "~", Close: "~"},
	Code:         func(code string) string { return "`" + code + "`" },
	CodeBlock:    func(_, code string) string { return "```\n" + code + "\n```" },
	Link:         link,
	Heading:      func(text string) string { return "*" + text + "*" },
	FlatHeadings: true,
	Quote:        quote,
	Table:        table,
	Rule:         "──────────",
	Bullet:       "• ",
}

// ToWhatsApp rewrites the model's Markdown into WhatsApp's formatting.
func ToWhatsApp(md string) string {
	return strings.TrimSpace(markdown.Render(md, waStyle))
}

func link(label, url string) string {
	if label = strings.TrimSpace(label); label == "" || label == url {
		return url
	}
	return label + " (" + url + ")"
}

func quote(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// table turns a table into "• a — b" lines, the header into a bold line.
func table(header []markdown.Cell, rows [][]markdown.Cell) string {
	var out []string
	if h := joinCells(header, func(c markdown.Cell) string { return c.Plain }); h != "" {
		out = append(out, "*"+h+"*")
	}
	for _, row := range rows {
		if r := joinCells(row, func(c markdown.Cell) string { return c.Rendered }); r != "" {
			out = append(out, "• "+r)
		}
	}
	return strings.Join(out, "\n")
}

func joinCells(cells []markdown.Cell, text func(markdown.Cell) string) string {
	var parts []string
	for _, c := range cells {
		if t := text(c); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " — ")
}

// Messages is the Markdown md formatted and cut into messages of at most
// MaxChunk characters, as a reply is sent.
func Messages(md string) []string { return Chunk(ToWhatsApp(md), MaxChunk) }

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
