package markdown

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

type renderer struct {
	src     []byte
	style   Style
	flat    bool // inside a flat heading: no bold or italic markup
	inQuote bool // inside a quote
}

// quote renders a quote; a quote inside a quote joins it, since
// Telegram rejects nested blockquotes and WhatsApp shows one level.
func (r *renderer) quote(n *ast.Blockquote) string {
	if r.inQuote {
		return r.blocks(n, "\n")
	}
	r.inQuote = true
	body := r.blocks(n, "\n")
	r.inQuote = false
	return r.style.Quote(body)
}

// blocks renders the children of a container, separated by sep or, where
// the source had a blank line before a block, by a blank line.
func (r *renderer) blocks(parent ast.Node, sep string) string {
	var b strings.Builder
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		if c != parent.FirstChild() {
			if r.blankBefore(c) {
				b.WriteString("\n\n")
			} else {
				b.WriteString(sep)
			}
		}
		b.WriteString(r.block(c))
	}
	return b.String()
}

// blankBefore reports whether the source has a blank line before block
// c. goldmark's HasBlankPreviousLines is lost on a table (made from a
// paragraph) and set on the block after a closed code fence, so the
// source is read where the block's start is known.
func (r *renderer) blankBefore(c ast.Node) bool {
	pos, ok := r.startOf(c)
	if !ok {
		return c.HasBlankPreviousLines()
	}
	start := lineStart(r.src, pos)
	if start == 0 {
		return false
	}
	prev := r.src[lineStart(r.src, start-1) : start-1]
	return len(bytes.TrimSpace(prev)) == 0
}

// startOf returns an offset in the first source line of block c: its
// opening fence for a fenced code block.
func (r *renderer) startOf(c ast.Node) (int, bool) {
	switch n := c.(type) {
	case *ast.Text:
		return n.Segment.Start, true
	case *ast.FencedCodeBlock:
		if n.Lines().Len() == 0 {
			return 0, false
		}
		start := lineStart(r.src, n.Lines().At(0).Start)
		return start - 1, start > 0
	}
	if c.Type() != ast.TypeInline && c.Lines().Len() > 0 {
		return c.Lines().At(0).Start, true
	}
	if c.FirstChild() == nil {
		return 0, false
	}
	return r.startOf(c.FirstChild())
}

// lineStart is the offset of the start of the line holding pos.
func lineStart(src []byte, pos int) int {
	return bytes.LastIndexByte(src[:pos], '\n') + 1
}

func (r *renderer) block(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.inlines(n)
	case *ast.Heading:
		return r.heading(n)
	case *ast.ThematicBreak:
		return r.style.Rule
	case *ast.FencedCodeBlock:
		return r.style.CodeBlock(string(n.Language(r.src)), r.lines(n))
	case *ast.CodeBlock:
		return r.style.CodeBlock("", r.lines(n))
	case *ast.Blockquote:
		return r.quote(n)
	case *ast.List:
		return r.list(n)
	case *ast.HTMLBlock:
		// The model's HTML is text: no platform gets markup it did not ask for.
		return r.style.Text(strings.TrimRight(r.lines(n)+r.closure(n), "\n"))
	case *east.Table:
		return r.table(n)
	}
	return r.blocks(n, "\n")
}

func (r *renderer) heading(n *ast.Heading) string {
	r.flat = r.style.FlatHeadings
	t := strings.TrimSpace(r.inlines(n))
	r.flat = false
	if t == "" {
		return ""
	}
	return r.style.Heading(t)
}

// lines is the raw text of a code or HTML block, without its last newline.
func (r *renderer) lines(n ast.Node) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(r.src))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (r *renderer) closure(n *ast.HTMLBlock) string {
	if !n.HasClosure() {
		return ""
	}
	return "\n" + string(n.ClosureLine.Value(r.src))
}

// list renders one item a line (a blank line between the items of a
// loose list); a nested list is indented under its item.
func (r *renderer) list(n *ast.List) string {
	sep := "\n"
	if !n.IsTight {
		sep = "\n\n"
	}
	var items []string
	num := n.Start
	for it := n.FirstChild(); it != nil; it = it.NextSibling() {
		marker := r.style.Bullet
		if n.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		items = append(items, marker+r.item(it, sep))
	}
	return strings.Join(items, sep)
}

func (r *renderer) item(it ast.Node, sep string) string {
	var parts []string
	for c := it.FirstChild(); c != nil; c = c.NextSibling() {
		s := r.block(c)
		if _, nested := c.(*ast.List); nested {
			s = indent(s, "  ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

func indent(s, by string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n")
}

func (r *renderer) table(t *east.Table) string {
	var (
		header []Cell
		rows   [][]Cell
	)
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []Cell
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, Cell{Plain: plain(c, r.src), Rendered: strings.TrimSpace(r.inlines(c))})
		}
		if _, ok := row.(*east.TableHeader); ok {
			header = cells
			continue
		}
		rows = append(rows, cells)
	}
	return r.style.Table(header, rows)
}
