package markdown

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// inlines renders the inline children of n.
func (r *renderer) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b.WriteString(r.inline(c))
	}
	return b.String()
}

func (r *renderer) inline(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Text:
		return r.text(n)
	case *ast.String:
		return r.style.Text(string(n.Value))
	case *ast.CodeSpan:
		return r.style.Code(codeText(n, r.src))
	case *ast.Emphasis:
		p := r.style.Italic
		if n.Level >= 2 {
			p = r.style.Bold
		}
		return r.span(p, n)
	case *east.Strikethrough:
		return r.span(r.style.Strike, n)
	case *ast.Link:
		return r.style.Link(r.inlines(n), string(n.Destination))
	case *ast.Image:
		return r.style.Link(r.inlines(n), string(n.Destination))
	case *ast.AutoLink:
		url := string(n.URL(r.src))
		return r.style.Link(r.style.Text(string(n.Label(r.src))), url)
	case *ast.RawHTML:
		// Inline HTML in the model's text stays text.
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
		return r.style.Text(b.String())
	}
	return r.inlines(n)
}

func (r *renderer) span(p Pair, n ast.Node) string {
	inner := r.inlines(n)
	if r.flat {
		return inner
	}
	return p.Open + inner + p.Close
}

// text renders a text run with Markdown's escapes and entities resolved
// (`\*` is "*", "&amp;" is "&"), then escaped for the platform.
func (r *renderer) text(t *ast.Text) string {
	v := t.Segment.Value(r.src)
	if !t.IsRaw() {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
	}
	s := r.style.Text(string(v))
	if t.SoftLineBreak() || t.HardLineBreak() {
		s += "\n"
	}
	return s
}

// codeText is a code span's text as written.
func codeText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
		case *ast.String:
			b.Write(c.Value)
		}
	}
	return b.String()
}

// plain is the text of n without markup, for platforms that lay it out
// themselves (a table in a monospace block).
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
		case *ast.String:
			b.Write(c.Value)
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.Write(seg.Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}
