package webui

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/projections/auditlog"
)

func tokens(r auditlog.Row) string {
	if r.InputTokens == nil {
		return "not reported"
	}
	return fmt.Sprintf("%d / %d", *r.InputTokens, *r.OutputTokens)
}

// rowsHTML writes the audit table's rows (also served alone to the live
// update).
func rowsHTML(d *html.Doc, rows []auditlog.Row) {
	if len(rows) == 0 {
		d.Raw(`<tr class="empty"><td colspan="8">No turns match.</td></tr>` + "\n")
		return
	}
	for _, r := range rows {
		d.Raw(`<tr class="st-`, html.StatusClass(r.Status), `" data-turn="`)
		d.Esc(r.TurnID)
		d.Raw(`">`+"\n"+`<td class="when"><time datetime="`, html.ISO(r.At), `">`, html.When(r.At), `</time></td>`+"\n"+`<td><a href="`)
		d.Esc(html.SenderURL(r.Channel, r.SenderID))
		d.Raw(`">`)
		d.Esc(r.Channel + ":" + r.SenderID)
		d.Raw(`</a></td>` + "\n" + `<td><span class="badge">`)
		d.Esc(r.Status)
		d.Raw(`</span>`)
		if r.Acknowledged {
			d.Raw(` <span class="badge muted">acked</span>`)
		}
		d.Raw(`</td>` + "\n" + `<td class="wide">`)
		d.Esc(html.OrDash(r.Model))
		d.Raw(`</td>`+"\n"+`<td class="num lat">`, html.FmtMs(r.LatencyMs), `</td>`+"\n"+`<td class="num wide">`, tokens(r),
			`</td>`+"\n"+`<td class="num wide">`, html.Cost(r.CostUSD), `</td>`+"\n"+`<td class="msg"><a href="/ui/turns/`)
		d.Esc(url.PathEscape(r.TurnID))
		d.Raw(`">`)
		d.Esc(html.OneLine(r.Input))
		d.Raw(`</a></td>` + "\n" + `</tr>` + "\n")
	}
}

// rowsFragment is the rows alone.
func rowsFragment(rows []auditlog.Row) string {
	var d html.Doc
	rowsHTML(&d, rows)
	return d.String()
}

const auditHead = `<thead><tr><th>When (UTC)</th><th>Sender</th><th>Status</th><th class="wide">Model</th><th>Latency</th><th class="wide">Tokens in/out</th><th class="wide">Cost</th><th>Message</th></tr></thead>` + "\n"

func auditHTML(a auditData) string {
	return html.Page(a.Title, func(d *html.Doc) {
		d.Raw(`<h1>Audit</h1>` + "\n")
		channelsHTML(d, a.Channels, a.Now)
		d.Raw(`<form class="filters" method="get" action="/ui/">` + "\n")
		input := func(label, name, placeholder string) {
			d.Raw(`<label>`, label, ` <input name="`, name, `"`)
			if placeholder != "" {
				d.Raw(` placeholder="`, placeholder, `"`)
			}
			d.Raw(` value="`)
			d.Esc(a.Q[name])
			d.Raw(`"></label>` + "\n")
		}
		input("Sender", "sender", "telegram:12345")
		input("Channel", "channel", "")
		d.Raw(`<label>Status <select name="status"><option value="">any</option>`)
		for _, st := range a.Statuses {
			d.Raw(`<option`)
			if st == a.Q["status"] {
				d.Raw(` selected`)
			}
			d.Raw(`>`)
			d.Esc(st)
			d.Raw(`</option>`)
		}
		d.Raw(`</select></label>` + "\n")
		input("Since", "since", "24h or 2026-01-02T15:04:05Z")
		input("Until", "until", "")
		input("Model", "model", "")
		input("Project", "project", "")
		input("Text", "grep", "")
		d.Raw(`<button type="submit">Filter</button> <a href="/ui/">clear</a>` + "\n" + `</form>` + "\n" +
			`<div class="scroll">` + "\n" + `<table class="audit">` + "\n" + auditHead + `<tbody id="rows"`)
		if a.LiveOn {
			d.Raw(` data-live="`)
			d.Esc(a.Live)
			d.Raw(`" data-top="`)
			d.Esc(a.Top)
			d.Raw(`"`)
		}
		d.Raw(">\n")
		rowsHTML(d, a.Rows)
		d.Raw(`</tbody>` + "\n" + `</table>` + "\n" + `</div>` + "\n" + `<p class="pager">`)
		if a.LiveOn {
			d.Raw(`<span id="live" class="muted">live</span>`)
		}
		if a.Next != "" {
			d.Raw(` <a href="`)
			d.Esc(a.Next)
			d.Raw(`">older turns →</a>`)
		}
		d.Raw(`</p>`)
	})
}

func deniedHTML(msg string) string {
	return html.Page("Sign in", func(d *html.Doc) {
		d.Raw(`<h1>Sign in</h1>` + "\n" + `<p>`)
		d.Esc(msg)
		d.Raw(`</p>`)
	})
}

func turnHTML(t turnData) string {
	return html.Page(t.Title, func(d *html.Doc) {
		r := t.Row
		d.Raw(`<h1>Turn <code>`)
		d.Esc(audit.ShortID(t.ID))
		d.Raw(`</code></h1>` + "\n" + `<dl class="facts">` + "\n" + `<dt>Sender</dt><dd><a href="`)
		d.Esc(html.SenderURL(r.Channel, r.SenderID))
		d.Raw(`">`)
		d.Esc(r.Channel + ":" + r.SenderID)
		d.Raw(`</a></dd>`+"\n"+`<dt>Status</dt><dd><span class="badge st-`, html.StatusClass(r.Status), `">`)
		d.Esc(r.Status)
		d.Raw(`</span>`)
		if r.Acknowledged {
			d.Raw(` (acknowledged while busy)`)
		}
		d.Raw("</dd>\n")
		if t.Done {
			d.Raw(`<dt>Model</dt><dd>`)
			d.Esc(html.OrDash(r.Model))
			if r.Provider != "" {
				d.Raw(` via `)
				d.Esc(r.Provider)
			}
			d.Raw(`</dd>`+"\n"+`<dt>Latency</dt><dd>`, html.FmtMs(r.LatencyMs), ` (provider `, html.FmtMs(r.ProviderMs), ` over `,
				strconv.FormatInt(r.Calls, 10), ` call(s))</dd>`+"\n"+`<dt>Tokens in/out</dt><dd>`, tokens(r),
				`</dd>`+"\n"+`<dt>Cost</dt><dd>`, html.Cost(r.CostUSD), `</dd>`)
		}
		d.Raw("\n" + `<dt>Turn id</dt><dd><code>`)
		d.Esc(t.ID)
		d.Raw(`</code></dd>` + "\n" + `</dl>` + "\n")
		if t.Live {
			// app.js follows the turn's event stream and fills this in.
			d.Raw(`<section id="live-reply" data-stream="/ui/turns/`)
			d.Esc(t.ID)
			d.Raw(`/stream">` + "\n" + `<h2>Reply so far <span class="live-state">waiting…</span></h2>` + "\n" +
				`<p class="live-activity"></p>` + "\n" + `<pre class="live-text"></pre>` + "\n" + `</section>` + "\n")
		}
		d.Raw(`<ol class="timeline">` + "\n")
		for _, e := range t.Events {
			d.Raw(`<li class="ev ev-`)
			d.Esc(e.Class)
			d.Raw(`">` + "\n" + `<div class="ev-head"><span class="rel">`)
			d.Esc(e.Rel)
			d.Raw(`</span> <strong class="type">`)
			d.Esc(e.Type)
			d.Raw(`</strong> <span class="summary">`)
			d.Esc(e.Summary)
			d.Raw(`</span></div>` + "\n")
			if len(e.Markers) > 0 {
				d.Raw(`<ul class="markers">`)
				for _, m := range e.Markers {
					d.Raw(`<li><code>`)
					d.Esc(m.Name)
					d.Raw(`</code> → `)
					d.Esc(m.Effect)
					if m.Stream != "" {
						d.Raw(` <span class="muted">(`)
						d.Esc(m.Stream)
						d.Raw(`)</span>`)
					}
					d.Raw(`</li>`)
				}
				d.Raw("</ul>\n")
			}
			for _, x := range e.Texts {
				d.Raw(`<details`)
				if !x.Folded {
					d.Raw(` open`)
				}
				d.Raw(`><summary>`)
				d.Esc(x.Label)
				d.Raw(` (`, strconv.Itoa(len(x.Text)), ` bytes)</summary><pre>`)
				d.Esc(x.Text)
				d.Raw(`</pre></details>`)
			}
			d.Raw("\n</li>\n")
		}
		d.Raw(`</ol>`)
	})
}

func senderHTML(s senderData) string {
	return html.Page(s.Title, func(d *html.Doc) {
		v := s.View
		d.Raw(`<h1>`)
		d.Esc(s.Channel + ":" + s.ID)
		d.Raw("</h1>\n")
		if s.Loc != nil {
			asOfHTML(d, s)
		}
		searchLink(d, s.Channel+":"+s.ID)
		if v.Known {
			d.Raw(`<dl class="facts">` + "\n")
			if v.Name != "" {
				d.Raw(`<dt>Name</dt><dd>`)
				d.Esc(v.Name)
				d.Raw("</dd>")
			}
			d.Raw("\n<dt>Language</dt><dd>")
			d.Esc(html.OrDash(v.Language))
			d.Raw("</dd>\n")
			if v.Personality != "" {
				d.Raw(`<dt>Personality</dt><dd>`)
				d.Esc(v.Personality)
				d.Raw("</dd>")
			}
			d.Raw("\n</dl>")
		} else {
			d.Raw(`<p class="muted">No profile recorded for this sender yet.</p>`)
		}
		wide := func(s string) func() {
			return func() {
				d.Raw(`<td class="wide">`)
				d.Esc(s)
				d.Raw(`</td>`)
			}
		}
		d.Raw("\n<h2>Facts</h2>\n")
		html.Table(d, len(v.Facts), `<th>Key</th><th>Value</th><th class="wide">Updated (UTC)</th>`, "No facts.", func(i int) {
			f := v.Facts[i]
			d.Cells(f.Key, f.Value, wide(html.When(f.UpdatedAt)))
		})
		d.Raw("<h2>Tasks</h2>\n")
		html.Table(d, len(v.Tasks), `<th>Next due (UTC)</th><th>Task</th><th>Repeat</th><th class="wide">Kind</th>`, "No pending tasks.", func(i int) {
			t := v.Tasks[i]
			repeat := t.Repeat
			if repeat == "" {
				repeat = "once"
			}
			due := func() { d.Raw(`<td><time datetime="`, html.ISO(t.Due), `">`, html.When(t.Due), `</time></td>`) }
			d.Cells(due, t.Description, repeat, wide(t.Kind))
		})
		d.Raw("<h2>Heartbeat checklist</h2>\n")
		checklistHTML(d, s.Heartbeat)
		d.Raw("\n<h2>Sessions</h2>\n")
		html.Table(d, len(v.Sessions), `<th>Project</th><th>Session</th><th class="wide">Provider</th><th class="wide">Updated (UTC)</th>`, "No provider sessions.", func(i int) {
			x := v.Sessions[i]
			project := x.Project
			if project == "" {
				project = "(none)"
			}
			session := func() {
				d.Raw(`<td><code>`)
				d.Esc(x.SessionID)
				d.Raw(`</code></td>`)
			}
			d.Cells(project, session, wide(x.Provider), wide(html.When(x.UpdatedAt)))
		})
		d.Raw(`<h2>Recent turns</h2>` + "\n" + `<div class="scroll">` + "\n" + `<table class="audit">` + "\n" + auditHead + `<tbody>`)
		rowsHTML(d, s.Turns)
		d.Raw(`</tbody>` + "\n" + `</table>` + "\n" + `</div>`)
	})
}

// intervalBy says who set the heartbeat interval; nothing where the event
// does not say.
var intervalBy = map[string]string{
	heartbeat.IntervalByAgent: " (set by the agent)",
	heartbeat.IntervalByCLI:   " (set with omega heartbeat interval)",
}

// checklistHTML writes the heartbeat checklist; nil: the heartbeat is off.
func checklistHTML(d *html.Doc, hb *heartbeat.Heartbeat) {
	if hb == nil {
		d.Raw(`<p class="muted">The heartbeat is off.</p>`)
		return
	}
	if len(hb.Items) > 0 {
		d.Raw(`<ul class="checklist">`)
		for _, it := range hb.Items {
			d.Raw(`<li>`)
			d.Esc(it)
			d.Raw(`</li>`)
		}
		d.Raw(`</ul>`)
	} else {
		d.Raw(`<p class="muted">The checklist is empty: no check-ins run.</p>`)
	}
	if len(hb.Suppressed) > 0 {
		d.Raw("\n" + `<p class="muted">Suppressed sections: `)
		d.Esc(strings.Join(hb.Suppressed, ", "))
		d.Raw(`</p>`)
	}
	if hb.Interval != 0 {
		d.Raw("\n"+`<p class="muted">Every `, strconv.Itoa(hb.Interval), ` min`, intervalBy[hb.IntervalBy], `.</p>`)
	}
}
