// Package markdown parses the model's Markdown once, with goldmark
// (CommonMark with GitHub's tables and strikethrough), and renders the
// tree for a channel through a Style, so that nesting, lists, tables,
// code fences and inline code mean the same on every channel; only the
// markup each platform understands differs. Chunk cuts the rendered
// text into a platform's message size.
package markdown

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Pair is the markup that opens and closes an inline span.
type Pair struct{ Open, Close string }

// Cell is a table cell: its text without markup, and rendered.
type Cell struct{ Plain, Rendered string }

// Style is what a platform makes of each construct. Text escapes plain
// text; the funcs get parts already rendered (and escaped) unless their
// comment says otherwise.
type Style struct {
	Text                 func(s string) string
	Bold, Italic, Strike Pair
	// Code and CodeBlock get the code unescaped; lang may be "".
	Code      func(code string) string
	CodeBlock func(lang, code string) string
	// Link gets the rendered label and the unescaped destination.
	Link    func(label, url string) string
	Heading func(text string) string
	// FlatHeadings renders headings without inner bold or italic, for a
	// platform that cannot nest them.
	FlatHeadings bool
	// Quote gets the quoted blocks rendered.
	Quote func(body string) string
	// Table gets the header row (nil without one) and the body rows.
	Table func(header []Cell, rows [][]Cell) string
	Rule  string
	// Bullet starts an unordered list item; ordered items start "N. ".
	Bullet string
}

// parser is built once and only read afterwards: goldmark's parser is
// safe for concurrent use.
var parser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// Render converts md for the platform that s describes.
func Render(md string, s Style) string {
	src := []byte(strings.ReplaceAll(md, "\r\n", "\n"))
	doc := parser.Parse(text.NewReader(src))
	r := &renderer{src: src, style: s}
	return r.blocks(doc, "\n")
}
