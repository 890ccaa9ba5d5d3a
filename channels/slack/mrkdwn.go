package slack

import (
	"strings"

	"github.com/omega-gateway/omega/channels/markdown"
)

// maxChunk keeps each message under Slack's advice for chat.postMessage
// (4,000 characters; longer text is truncated at 40,000).
const maxChunk = 3900

// mrkdwnStyle renders the Markdown tree in Slack's mrkdwn: *bold*,
// _italic_, ~strike~, `code`, ``` blocks, "> " quotes, <url|label>
// links; &, < and > escaped everywhere, as Slack requires.
var mrkdwnStyle = markdown.Style{
	Text:         escape,
	Bold:         markdown.Pair{Open: "*", Close: "*"},
	Italic:       markdown.Pair{Open: "_", Close: "_"},
	Strike:       markdown.Pair{Open: "~", Close: "~"},
	Code:         func(code string) string { return "`" + escape(code) + "`" },
	CodeBlock:    func(_, code string) string { return "```\n" + escape(code) + "\n```" },
	Link:         link,
	Heading:      func(text string) string { return "*" + text + "*" },
	FlatHeadings: true,
	Quote:        quote,
	Table:        table,
	Rule:         "──────────",
	Bullet:       "• ",
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escape(s string) string { return escaper.Replace(s) }

// toMrkdwn rewrites the model's Markdown in Slack's mrkdwn.
func toMrkdwn(md string) string { return strings.TrimSpace(markdown.Render(md, mrkdwnStyle)) }

// messages is md as mrkdwn, cut into messages Slack shows whole.
func messages(md string) []string { return markdown.Chunk(toMrkdwn(md), maxChunk) }

func link(label, url string) string {
	url = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C").Replace(url)
	label = strings.ReplaceAll(strings.TrimSpace(label), "|", "¦")
	if label == "" || label == url {
		return "<" + url + ">"
	}
	return "<" + url + "|" + label + ">"
}

func quote(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// table turns a table into "• a — b" lines under a bold header line:
// mrkdwn has no tables.
func table(header []markdown.Cell, rows [][]markdown.Cell) string {
	var out []string
	if h := joinCells(header, func(c markdown.Cell) string { return escape(c.Plain) }); h != "" {
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
