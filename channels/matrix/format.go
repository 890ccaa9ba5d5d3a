package matrix

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/omega-gateway/omega/channels/markdown"
)

// formatHint tells the model how its replies are shown.
const formatHint = "Replies are shown in a Matrix client: Markdown (bold, italic, code, lists, links, tables) is rendered as HTML."

// maxChunk is the most Markdown one message carries: an event may hold
// 64 KiB, and the HTML rendering travels beside the plain text.
const maxChunk = 16000

// htmlStyle renders the model's Markdown as the HTML subset Matrix
// clients display (org.matrix.custom.html).
var htmlStyle = markdown.Style{
	Text:   html.EscapeString,
	Bold:   markdown.Pair{Open: "<strong>", Close: "</strong>"},
	Italic: markdown.Pair{Open: "<em>", Close: "</em>"},
	Strike: markdown.Pair{Open: "<del>", Close: "</del>"},
	Code:   func(code string) string { return "<code>" + html.EscapeString(code) + "</code>" },
	CodeBlock: func(lang, code string) string {
		class := ""
		if lang != "" {
			class = ` class="language-` + html.EscapeString(lang) + `"`
		}
		return "<pre><code" + class + ">" + html.EscapeString(code) + "</code></pre>"
	},
	Link:    renderLink,
	Heading: func(text string) string { return "<strong>" + text + "</strong>" },
	Quote:   func(body string) string { return "<blockquote>" + body + "</blockquote>" },
	Table:   renderTable,
	Rule:    "<hr>",
	Bullet:  "• ",
}

// renderHTML renders md; line breaks outside code blocks become <br>,
// since HTML would fold them.
func renderHTML(md string) string {
	out := markdown.Render(md, htmlStyle)
	var b strings.Builder
	for {
		start := strings.Index(out, "<pre>")
		if start < 0 {
			b.WriteString(strings.ReplaceAll(out, "\n", "<br>"))
			return b.String()
		}
		end := strings.Index(out[start:], "</pre>")
		if end < 0 {
			end = len(out) - start - len("</pre>")
		}
		end += start + len("</pre>")
		b.WriteString(strings.ReplaceAll(out[:start], "\n", "<br>"))
		b.WriteString(out[start:end])
		out = strings.TrimPrefix(out[end:], "\n")
	}
}

func renderLink(label, url string) string {
	lower := strings.ToLower(url)
	for _, scheme := range []string{"http://", "https://", "mailto:", "matrix:"} {
		if strings.HasPrefix(lower, scheme) {
			if strings.TrimSpace(label) == "" {
				label = html.EscapeString(url)
			}
			return `<a href="` + html.EscapeString(url) + `">` + label + "</a>"
		}
	}
	return label + " (" + html.EscapeString(url) + ")"
}

func renderTable(header []markdown.Cell, rows [][]markdown.Cell) string {
	var b strings.Builder
	b.WriteString("<table>")
	row := func(cells []markdown.Cell, tag string) {
		b.WriteString("<tr>")
		for _, c := range cells {
			b.WriteString("<" + tag + ">" + c.Rendered + "</" + tag + ">")
		}
		b.WriteString("</tr>")
	}
	if header != nil {
		row(header, "th")
	}
	for _, r := range rows {
		row(r, "td")
	}
	b.WriteString("</table>")
	return b.String()
}

// chunk splits md into pieces of at most limit bytes, at paragraph
// breaks where it can, else at line breaks, else between words.
func chunk(md string, limit int) []string {
	var out []string
	for len(md) > limit {
		cut := lastBreak(md, limit)
		out = append(out, strings.TrimSpace(md[:cut]))
		md = strings.TrimLeft(md[cut:], " \n")
	}
	if strings.TrimSpace(md) != "" || len(out) == 0 {
		out = append(out, strings.TrimSpace(md))
	}
	return out
}

// lastBreak is where to cut md to at most limit bytes (len(md) > limit).
func lastBreak(md string, limit int) int {
	s := md[:limit]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(s, sep); i > limit/2 {
			return i
		}
	}
	// One long word: cut at the limit, on a character boundary.
	i := limit
	for i > 0 && !utf8.RuneStart(md[i]) {
		i--
	}
	return i
}
