// Package waformat is WhatsApp's text format: the model's Markdown in
// WhatsApp's formatting, cut into messages on paragraph, line and word
// boundaries with code blocks closed and reopened at a cut.
package waformat

import (
	"strings"

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
func Messages(md string) []string { return markdown.Chunk(ToWhatsApp(md), MaxChunk) }
