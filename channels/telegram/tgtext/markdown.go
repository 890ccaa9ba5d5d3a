// Package tgtext is Telegram's text format: the model's Markdown rendered
// as the Bot API's HTML parse mode, that HTML cut into messages on
// paragraph and code-fence boundaries, and the plain-text fallback used
// when Telegram rejects the HTML.
package tgtext

import (
	"html"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/omega-gateway/omega/channels/markdown"
)

// Telegram's HTML parse mode accepts a small tag set (b, i, s, code, pre,
// a, blockquote, ...) and rejects anything else, so the model's Markdown
// is parsed by goldmark (channels/markdown) and rendered with this style:
// every construct is a matched pair of allowed tags and every other <, >
// and & is escaped, so the output is well-formed whatever the Markdown.
// Telegram has no tables: a table becomes a <pre> block with its columns
// aligned. Headings are bold lines, bullet items "• " lines, numbered
// items keep their numbers.

var langRe = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

var htmlStyle = markdown.Style{
	Text:      escapeText,
	Bold:      markdown.Pair{Open: "<b>", Close: "</b>"},
	Italic:    markdown.Pair{Open: "<i>", Close: "</i>"},
	Strike:    markdown.Pair{Open: "<s>", Close: "</s>"},
	Code:      func(code string) string { return "<code>" + escapeText(code) + "</code>" },
	CodeBlock: codeBlock,
	Link:      renderLink,
	Heading:   func(text string) string { return "<b>" + text + "</b>" },
	Quote:     func(body string) string { return "<blockquote>" + body + "</blockquote>" },
	Table:     table,
	Rule:      "──────────",
	Bullet:    "• ",
}

// MarkdownToHTML converts the model's Markdown to Telegram HTML.
func MarkdownToHTML(md string) string {
	return markdown.Render(md, htmlStyle)
}

// textEscaper escapes only what Telegram requires outside attributes;
// quotes stay literal, which keeps messages shorter.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escapeText(s string) string { return textEscaper.Replace(s) }

func codeBlock(lang, code string) string {
	open := "<pre><code>"
	if langRe.MatchString(lang) {
		open = `<pre><code class="language-` + lang + `">`
	}
	return open + escapeText(code) + "</code></pre>"
}

// renderLink emits a link only for schemes Telegram accepts; anything
// else is shown as text so the message is not rejected.
func renderLink(label, url string) string {
	if strings.TrimSpace(label) == "" {
		label = escapeText(url) // an empty link would show nothing
	}
	lower := strings.ToLower(url)
	for _, scheme := range []string{"http://", "https://", "tg://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			return `<a href="` + html.EscapeString(url) + `">` + label + "</a>"
		}
	}
	if label == escapeText(url) {
		return label
	}
	return label + " (" + escapeText(url) + ")"
}

// table lays a table out as monospace text with aligned columns, the
// header underlined: Telegram renders no table markup.
func table(header []markdown.Cell, rows [][]markdown.Cell) string {
	all := rows
	if header != nil {
		all = append([][]markdown.Cell{header}, rows...)
	}
	var widths []int
	for _, row := range all {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.Plain))
		}
	}
	var lines []string
	for i, row := range all {
		lines = append(lines, tableLine(row, widths))
		if i == 0 && header != nil {
			rule := make([]string, len(widths))
			for j, w := range widths {
				rule[j] = strings.Repeat("-", w)
			}
			lines = append(lines, strings.Join(rule, "-+-"))
		}
	}
	return "<pre>" + escapeText(strings.Join(lines, "\n")) + "</pre>"
}

func tableLine(row []markdown.Cell, widths []int) string {
	cells := make([]string, len(widths))
	for i, w := range widths {
		text := ""
		if i < len(row) {
			text = row[i].Plain
		}
		cells[i] = text + strings.Repeat(" ", w-utf8.RuneCountInString(text))
	}
	return strings.TrimRight(strings.Join(cells, " | "), " ")
}
