package webui

import (
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/projections/auditlog"
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
// Every value that did not come from this file goes through esc (text and
// double-quoted attribute values alike) or, in a link, through
// url.PathEscape or url.Values first.

// doc is an HTML document being written.
type doc struct{ strings.Builder }

// raw writes markup of this package's own.
func (d *doc) raw(parts ...string) {
	for _, s := range parts {
		d.WriteString(s)
	}
}

// esc writes text escaped for an element's content or a quoted attribute.
func (d *doc) esc(s string) { d.WriteString(html.EscapeString(s)) }

// page writes the layout around content.
func page(title string, content func(d *doc)) string {
	var d doc
	d.raw(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	d.esc(title)
	d.raw(` · omega</title>
<link rel="stylesheet" href="/ui/static/app.css">
<script src="/ui/static/app.js" defer></script>
</head>
<body>
<header><a class="brand" href="/ui/">omega</a><nav><a href="/ui/">audit</a> <a href="/ui/usage">usage</a> <a href="/ui/builds">builds</a></nav>
<form class="search" method="get" action="/ui/search" role="search"><input type="search" name="q" placeholder="Search conversations" aria-label="Search conversations"></form></header>
<main>
`)
	content(&d)
	d.raw(`
</main>
</body>
</html>
`)
	return d.String()
}

func fmtMs(n int64) string {
	return (time.Duration(n) * time.Millisecond).Round(time.Millisecond).String()
}
func when(t time.Time) string {
	if t.IsZero() {
		return "—" // a past moment's fold keeps no change times
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}
func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// oneline is a message on one line, cut to 90 characters.
func oneline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 90 {
		return string(r[:89]) + "…"
	}
	return s
}

func tokens(r auditlog.Row) string {
	if r.InputTokens == nil {
		return "not reported"
	}
	return fmt.Sprintf("%d / %d", *r.InputTokens, *r.OutputTokens)
}

func cost(c *float64) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("$%.4f", *c)
}

func senderURL(channel, id string) string {
	return "/ui/senders/" + url.PathEscape(channel) + "/" + url.PathEscape(id)
}

func statusClass(s string) string {
	switch s {
	case "answered":
		return "ok"
	case "denied", "failed":
		return s
	}
	return "other"
}

// orDash is s, or a dash when it is empty.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// rowsHTML writes the audit table's rows (also served alone to the live
// update).
func rowsHTML(d *doc, rows []auditlog.Row) {
	if len(rows) == 0 {
		d.raw(`<tr class="empty"><td colspan="8">No turns match.</td></tr>` + "\n")
		return
	}
	for _, r := range rows {
		d.raw(`<tr class="st-`, statusClass(r.Status), `" data-turn="`)
		d.esc(r.TurnID)
		d.raw(`">`+"\n"+`<td class="when"><time datetime="`, iso(r.At), `">`, when(r.At), `</time></td>`+"\n"+`<td><a href="`)
		d.esc(senderURL(r.Channel, r.SenderID))
		d.raw(`">`)
		d.esc(r.Channel + ":" + r.SenderID)
		d.raw(`</a></td>` + "\n" + `<td><span class="badge">`)
		d.esc(r.Status)
		d.raw(`</span>`)
		if r.Acknowledged {
			d.raw(` <span class="badge muted">acked</span>`)
		}
		d.raw(`</td>` + "\n" + `<td class="wide">`)
		d.esc(orDash(r.Model))
		d.raw(`</td>`+"\n"+`<td class="num lat">`, fmtMs(r.LatencyMs), `</td>`+"\n"+`<td class="num wide">`, tokens(r),
			`</td>`+"\n"+`<td class="num wide">`, cost(r.CostUSD), `</td>`+"\n"+`<td class="msg"><a href="/ui/turns/`)
		d.esc(url.PathEscape(r.TurnID))
		d.raw(`">`)
		d.esc(oneline(r.Input))
		d.raw(`</a></td>` + "\n" + `</tr>` + "\n")
	}
}

// rowsFragment is the rows alone.
func rowsFragment(rows []auditlog.Row) string {
	var d doc
	rowsHTML(&d, rows)
	return d.String()
}

const auditHead = `<thead><tr><th>When (UTC)</th><th>Sender</th><th>Status</th><th class="wide">Model</th><th>Latency</th><th class="wide">Tokens in/out</th><th class="wide">Cost</th><th>Message</th></tr></thead>` + "\n"

func auditHTML(a auditData) string {
	return page(a.Title, func(d *doc) {
		d.raw(`<h1>Audit</h1>` + "\n")
		channelsHTML(d, a.Channels, a.Now)
		d.raw(`<form class="filters" method="get" action="/ui/">` + "\n")
		input := func(label, name, placeholder string) {
			d.raw(`<label>`, label, ` <input name="`, name, `"`)
			if placeholder != "" {
				d.raw(` placeholder="`, placeholder, `"`)
			}
			d.raw(` value="`)
			d.esc(a.Q[name])
			d.raw(`"></label>` + "\n")
		}
		input("Sender", "sender", "telegram:12345")
		input("Channel", "channel", "")
		d.raw(`<label>Status <select name="status"><option value="">any</option>`)
		for _, st := range a.Statuses {
			d.raw(`<option`)
			if st == a.Q["status"] {
				d.raw(` selected`)
			}
			d.raw(`>`)
			d.esc(st)
			d.raw(`</option>`)
		}
		d.raw(`</select></label>` + "\n")
		input("Since", "since", "24h or 2026-01-02T15:04:05Z")
		input("Until", "until", "")
		input("Model", "model", "")
		input("Project", "project", "")
		input("Text", "grep", "")
		d.raw(`<button type="submit">Filter</button> <a href="/ui/">clear</a>` + "\n" + `</form>` + "\n" +
			`<div class="scroll">` + "\n" + `<table class="audit">` + "\n" + auditHead + `<tbody id="rows"`)
		if a.LiveOn {
			d.raw(` data-live="`)
			d.esc(a.Live)
			d.raw(`" data-top="`)
			d.esc(a.Top)
			d.raw(`"`)
		}
		d.raw(">\n")
		rowsHTML(d, a.Rows)
		d.raw(`</tbody>` + "\n" + `</table>` + "\n" + `</div>` + "\n" + `<p class="pager">`)
		if a.LiveOn {
			d.raw(`<span id="live" class="muted">live</span>`)
		}
		if a.Next != "" {
			d.raw(` <a href="`)
			d.esc(a.Next)
			d.raw(`">older turns →</a>`)
		}
		d.raw(`</p>`)
	})
}

func deniedHTML(msg string) string {
	return page("Sign in", func(d *doc) {
		d.raw(`<h1>Sign in</h1>` + "\n" + `<p>`)
		d.esc(msg)
		d.raw(`</p>`)
	})
}

func turnHTML(t turnData) string {
	return page(t.Title, func(d *doc) {
		r := t.Row
		d.raw(`<h1>Turn <code>`)
		d.esc(audit.ShortID(t.ID))
		d.raw(`</code></h1>` + "\n" + `<dl class="facts">` + "\n" + `<dt>Sender</dt><dd><a href="`)
		d.esc(senderURL(r.Channel, r.SenderID))
		d.raw(`">`)
		d.esc(r.Channel + ":" + r.SenderID)
		d.raw(`</a></dd>`+"\n"+`<dt>Status</dt><dd><span class="badge st-`, statusClass(r.Status), `">`)
		d.esc(r.Status)
		d.raw(`</span>`)
		if r.Acknowledged {
			d.raw(` (acknowledged while busy)`)
		}
		d.raw("</dd>\n")
		if t.Done {
			d.raw(`<dt>Model</dt><dd>`)
			d.esc(orDash(r.Model))
			if r.Provider != "" {
				d.raw(` via `)
				d.esc(r.Provider)
			}
			d.raw(`</dd>`+"\n"+`<dt>Latency</dt><dd>`, fmtMs(r.LatencyMs), ` (provider `, fmtMs(r.ProviderMs), ` over `,
				strconv.FormatInt(r.Calls, 10), ` call(s))</dd>`+"\n"+`<dt>Tokens in/out</dt><dd>`, tokens(r),
				`</dd>`+"\n"+`<dt>Cost</dt><dd>`, cost(r.CostUSD), `</dd>`)
		}
		d.raw("\n" + `<dt>Turn id</dt><dd><code>`)
		d.esc(t.ID)
		d.raw(`</code></dd>` + "\n" + `</dl>` + "\n")
		if t.Live {
			// app.js follows the turn's event stream and fills this in.
			d.raw(`<section id="live-reply" data-stream="/ui/turns/`)
			d.esc(t.ID)
			d.raw(`/stream">` + "\n" + `<h2>Reply so far <span class="live-state">waiting…</span></h2>` + "\n" +
				`<p class="live-activity"></p>` + "\n" + `<pre class="live-text"></pre>` + "\n" + `</section>` + "\n")
		}
		d.raw(`<ol class="timeline">` + "\n")
		for _, e := range t.Events {
			d.raw(`<li class="ev ev-`)
			d.esc(e.Class)
			d.raw(`">` + "\n" + `<div class="ev-head"><span class="rel">`)
			d.esc(e.Rel)
			d.raw(`</span> <strong class="type">`)
			d.esc(e.Type)
			d.raw(`</strong> <span class="summary">`)
			d.esc(e.Summary)
			d.raw(`</span></div>` + "\n")
			if len(e.Markers) > 0 {
				d.raw(`<ul class="markers">`)
				for _, m := range e.Markers {
					d.raw(`<li><code>`)
					d.esc(m.Name)
					d.raw(`</code> → `)
					d.esc(m.Effect)
					if m.Stream != "" {
						d.raw(` <span class="muted">(`)
						d.esc(m.Stream)
						d.raw(`)</span>`)
					}
					d.raw(`</li>`)
				}
				d.raw("</ul>\n")
			}
			for _, x := range e.Texts {
				d.raw(`<details`)
				if !x.Folded {
					d.raw(` open`)
				}
				d.raw(`><summary>`)
				d.esc(x.Label)
				d.raw(` (`, strconv.Itoa(len(x.Text)), ` bytes)</summary><pre>`)
				d.esc(x.Text)
				d.raw(`</pre></details>`)
			}
			d.raw("\n</li>\n")
		}
		d.raw(`</ol>`)
	})
}

// table writes a scrolling table with head's columns, or empty when
// there are no rows.
func table(d *doc, n int, head, empty string, row func(i int)) {
	if n == 0 {
		d.raw(`<p class="muted">`, empty, "</p>\n")
		return
	}
	d.raw(`<div class="scroll"><table><thead><tr>`, head, "</tr></thead><tbody>\n")
	for i := range n {
		row(i)
	}
	d.raw("\n</tbody></table></div>\n")
}

// cells writes one table row of escaped cells; a cell already marked up
// is given as a func.
func (d *doc) cells(cells ...any) {
	d.raw(`<tr>`)
	for _, c := range cells {
		switch c := c.(type) {
		case string:
			d.raw(`<td>`)
			d.esc(c)
			d.raw(`</td>`)
		case func():
			c()
		}
	}
	d.raw(`</tr>`)
}

func senderHTML(s senderData) string {
	return page(s.Title, func(d *doc) {
		v := s.View
		d.raw(`<h1>`)
		d.esc(s.Channel + ":" + s.ID)
		d.raw("</h1>\n")
		if s.Loc != nil {
			asOfHTML(d, s)
		}
		searchLink(d, s.Channel+":"+s.ID)
		if v.Known {
			d.raw(`<dl class="facts">` + "\n")
			if v.Name != "" {
				d.raw(`<dt>Name</dt><dd>`)
				d.esc(v.Name)
				d.raw("</dd>")
			}
			d.raw("\n<dt>Language</dt><dd>")
			d.esc(orDash(v.Language))
			d.raw("</dd>\n")
			if v.Personality != "" {
				d.raw(`<dt>Personality</dt><dd>`)
				d.esc(v.Personality)
				d.raw("</dd>")
			}
			d.raw("\n</dl>")
		} else {
			d.raw(`<p class="muted">No profile recorded for this sender yet.</p>`)
		}
		wide := func(s string) func() {
			return func() {
				d.raw(`<td class="wide">`)
				d.esc(s)
				d.raw(`</td>`)
			}
		}
		d.raw("\n<h2>Facts</h2>\n")
		table(d, len(v.Facts), `<th>Key</th><th>Value</th><th class="wide">Updated (UTC)</th>`, "No facts.", func(i int) {
			f := v.Facts[i]
			d.cells(f.Key, f.Value, wide(when(f.UpdatedAt)))
		})
		d.raw("<h2>Tasks</h2>\n")
		table(d, len(v.Tasks), `<th>Next due (UTC)</th><th>Task</th><th>Repeat</th><th class="wide">Kind</th>`, "No pending tasks.", func(i int) {
			t := v.Tasks[i]
			repeat := t.Repeat
			if repeat == "" {
				repeat = "once"
			}
			due := func() { d.raw(`<td><time datetime="`, iso(t.Due), `">`, when(t.Due), `</time></td>`) }
			d.cells(due, t.Description, repeat, wide(t.Kind))
		})
		d.raw("<h2>Heartbeat checklist</h2>\n")
		checklistHTML(d, s.Heartbeat)
		d.raw("\n<h2>Sessions</h2>\n")
		table(d, len(v.Sessions), `<th>Project</th><th>Session</th><th class="wide">Provider</th><th class="wide">Updated (UTC)</th>`, "No provider sessions.", func(i int) {
			x := v.Sessions[i]
			project := x.Project
			if project == "" {
				project = "(none)"
			}
			session := func() {
				d.raw(`<td><code>`)
				d.esc(x.SessionID)
				d.raw(`</code></td>`)
			}
			d.cells(project, session, wide(x.Provider), wide(when(x.UpdatedAt)))
		})
		d.raw(`<h2>Recent turns</h2>` + "\n" + `<div class="scroll">` + "\n" + `<table class="audit">` + "\n" + auditHead + `<tbody>`)
		rowsHTML(d, s.Turns)
		d.raw(`</tbody>` + "\n" + `</table>` + "\n" + `</div>`)
	})
}

// intervalBy says who set the heartbeat interval; nothing where the event
// does not say.
var intervalBy = map[string]string{
	heartbeat.IntervalByAgent: " (set by the agent)",
	heartbeat.IntervalByCLI:   " (set with omega heartbeat interval)",
}

// checklistHTML writes the heartbeat checklist; nil: the heartbeat is off.
func checklistHTML(d *doc, hb *heartbeat.Heartbeat) {
	if hb == nil {
		d.raw(`<p class="muted">The heartbeat is off.</p>`)
		return
	}
	if len(hb.Items) > 0 {
		d.raw(`<ul class="checklist">`)
		for _, it := range hb.Items {
			d.raw(`<li>`)
			d.esc(it)
			d.raw(`</li>`)
		}
		d.raw(`</ul>`)
	} else {
		d.raw(`<p class="muted">The checklist is empty: no check-ins run.</p>`)
	}
	if len(hb.Suppressed) > 0 {
		d.raw("\n" + `<p class="muted">Suppressed sections: `)
		d.esc(strings.Join(hb.Suppressed, ", "))
		d.raw(`</p>`)
	}
	if hb.Interval != 0 {
		d.raw("\n"+`<p class="muted">Every `, strconv.Itoa(hb.Interval), ` min`, intervalBy[hb.IntervalBy], `.</p>`)
	}
}
