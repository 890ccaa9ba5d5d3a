package discord

import (
	"strings"

	"github.com/omega-gateway/omega/channels/markdown"
)

// MaxMessageLen is Discord's limit on a message's content.
const MaxMessageLen = 2000

// discordStyle renders the Markdown tree (channels/markdown) in Discord's
// Markdown: **bold**, *italic*, ~~strike~~, `code`, ``` blocks with their
// language, "> " quotes, "- " lists and masked links. Headings are bold
// lines (Discord's # headings are huge in a chat), tables are aligned
// columns in a code block (Discord has no tables), and plain text is
// escaped so a stray * or _ stays a character.
var discordStyle = markdown.Style{
	Text:         escape,
	Bold:         markdown.Pair{Open: "**", Close: "**"},
	Italic:       markdown.Pair{Open: "*", Close: "*"},
	Strike:       markdown.Pair{Open: "~~", Close: "~~"},
	Code:         inlineCode,
	CodeBlock:    func(lang, code string) string { return "```" + lang + "\n" + strings.TrimRight(code, "\n") + "\n```" },
	Link:         link,
	Heading:      func(text string) string { return "**" + text + "**" },
	FlatHeadings: true,
	Quote:        quote,
	Table:        table,
	Rule:         "──────────",
	Bullet:       "- ",
}

// ToDiscord rewrites the model's Markdown into Discord's.
func ToDiscord(md string) string {
	return strings.TrimSpace(markdown.Render(md, discordStyle))
}

// Messages is md formatted and cut into messages Discord takes.
func Messages(md string) []string { return Chunk(ToDiscord(md), MaxMessageLen) }

var escaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`)

func escape(s string) string { return escaper.Replace(s) }

func inlineCode(code string) string {
	if strings.Contains(code, "`") {
		return "`` " + code + " ``"
	}
	return "`" + code + "`"
}

func link(label, url string) string {
	if label = strings.TrimSpace(label); label == "" || label == url || label == escape(url) {
		return url
	}
	return "[" + label + "](" + url + ")"
}

func quote(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// table lays the cells out in aligned columns inside a code block.
func table(header []markdown.Cell, rows [][]markdown.Cell) string {
	all := rows
	if header != nil {
		all = append([][]markdown.Cell{header}, rows...)
	}
	var widths []int
	for _, row := range all {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c.Plain)))
		}
	}
	var b strings.Builder
	b.WriteString("```\n")
	for r, row := range all {
		var cells []string
		for i, c := range row {
			cells = append(cells, c.Plain+strings.Repeat(" ", widths[i]-len([]rune(c.Plain))))
		}
		b.WriteString(strings.TrimRight(strings.Join(cells, " | "), " ") + "\n")
		if r == 0 && header != nil {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("-", w))
			}
			b.WriteString(strings.Join(rule, "-+-") + "\n")
		}
	}
	b.WriteString("```")
	return b.String()
}
