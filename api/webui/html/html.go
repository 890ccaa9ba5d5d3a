// Package html holds the web UI's rendering primitives: a document
// writer that escapes everything it did not write itself, the page
// layout, tables and the formats of times, costs and links that every
// page shares.
package html

import (
	"fmt"
	stdhtml "html"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The pages are written by plain functions rather than html/template: a
// template reaches text/template's evaluation of fields and methods by name
// (reflect.Value.MethodByName with a name known only at run time), and the
// linker then has to keep every exported method of every type in the
// binary, because any of them might be called that way. In omega that
// was about 6 MB of code and tables (the getters of every WhatsApp protocol
// message among them), 20% of the executable, and 3.5 MiB of resident
// memory in every `omega serve` whether or not anyone opens /ui/
// (docs/BENCHMARKS.md, issue 12). cmd/omega's TestNoReflectMethodInBinary
// keeps it that way.
//
// Every value that did not come from the web UI's own code goes through
// Doc.Esc (text and double-quoted attribute values alike) or, in a link, through
// url.PathEscape or url.Values first.

// Doc is an HTML document being written.
type Doc struct{ strings.Builder }

// Raw writes markup of the caller's own, never input.
func (d *Doc) Raw(parts ...string) {
	for _, s := range parts {
		d.WriteString(s)
	}
}

// Esc writes text escaped for an element's content or a quoted attribute.
func (d *Doc) Esc(s string) { d.WriteString(stdhtml.EscapeString(s)) }

// Page writes the layout around content.
func Page(title string, content func(d *Doc)) string {
	var d Doc
	d.Raw(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	d.Esc(title)
	d.Raw(` · omega</title>
<link rel="stylesheet" href="/ui/static/app.css">
<script src="/ui/static/app.js" defer></script>
</head>
<body>
<header><a class="brand" href="/ui/">omega</a><nav><a href="/ui/">audit</a> <a href="/ui/usage">usage</a> <a href="/ui/builds">builds</a></nav>
<form class="search" method="get" action="/ui/search" role="search"><input type="search" name="q" placeholder="Search conversations" aria-label="Search conversations"></form></header>
<main>
`)
	content(&d)
	d.Raw(`
</main>
</body>
</html>
`)
	return d.String()
}

// FmtMs is a duration in milliseconds, rounded to the millisecond.
func FmtMs(n int64) string {
	return (time.Duration(n) * time.Millisecond).Round(time.Millisecond).String()
}

// When is a moment in UTC to the second, or a dash when unknown.
func When(t time.Time) string {
	if t.IsZero() {
		return "—" // a past moment's fold keeps no change times
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// ISO is a moment in UTC as RFC 3339.
func ISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// OneLine is a message on one line, cut to 90 characters.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 90 {
		return string(r[:89]) + "…"
	}
	return s
}

// Cost is a cost in dollars, or a dash when none was reported.
func Cost(c *float64) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("$%.4f", *c)
}

// SenderURL is the page of a sender on a channel.
func SenderURL(channel, id string) string {
	return "/ui/senders/" + url.PathEscape(channel) + "/" + url.PathEscape(id)
}

// StatusClass is the CSS class of a turn's status.
func StatusClass(s string) string {
	switch s {
	case "answered":
		return "ok"
	case "denied", "failed":
		return s
	}
	return "other"
}

// OrDash is s, or a dash when it is empty.
func OrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Table writes a scrolling table with head's columns, or empty when
// there are no rows.
func Table(d *Doc, n int, head, empty string, row func(i int)) {
	if n == 0 {
		d.Raw(`<p class="muted">`, empty, "</p>\n")
		return
	}
	d.Raw(`<div class="scroll"><table><thead><tr>`, head, "</tr></thead><tbody>\n")
	for i := range n {
		row(i)
	}
	d.Raw("\n</tbody></table></div>\n")
}

// Cells writes one table row of escaped cells; a cell already marked up
// is given as a func.
func (d *Doc) Cells(cells ...any) {
	d.Raw(`<tr>`)
	for _, c := range cells {
		switch c := c.(type) {
		case string:
			d.Raw(`<td>`)
			d.Esc(c)
			d.Raw(`</td>`)
		case func():
			c()
		}
	}
	d.Raw(`</tr>`)
}

// Render writes a page (or a fragment) to w, never cached.
func Render(w http.ResponseWriter, page string) { RenderStatus(w, http.StatusOK, page) }

// RenderStatus is Render with a status other than 200.
func RenderStatus(w http.ResponseWriter, status int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(page))
}

// Error writes a page that says what went wrong, in the layout, so that a
// person who followed a stale link or typed a bad filter can go on.
func Error(w http.ResponseWriter, status int, message string) {
	RenderStatus(w, status, Page(http.StatusText(status), func(d *Doc) {
		d.Raw(`<h1>`)
		d.Esc(http.StatusText(status))
		d.Raw(`</h1>
<p class="error">`)
		d.Esc(message)
		d.Raw(`</p>
<p><a href="/ui/">Back to the audit</a></p>`)
	}))
}
