package webui

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/api/webui/spendchart"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/providercalls"
)

// usageData is the usage page: every provider call of the time range,
// summed by purpose.
type usageData struct {
	Since, Until string
	Stats        []auditlog.Stats
	// Series is spend per day by purpose; nil when no calls are listed.
	Series   *providercalls.Series
	Location *time.Location
	from, to time.Time
}

// usagePage serves /ui/usage: calls, failures, provider time, tokens and
// cost by purpose (turn, plan_step, classifier, heartbeat, summary,
// facts, self_heal, build), for ?since= and ?until= as the audit takes them.
func (s *Server) usagePage(w http.ResponseWriter, r *http.Request) {
	f, q, err := filterOf(r, s.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	stats, err := s.audit.Stats(r.Context(), auditlog.Filter{Since: f.Since, Until: f.Until}, auditlog.ByPurpose)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u := usageData{Since: q["since"], Until: q["until"], Stats: stats, Location: s.loc, from: f.Since, to: f.Until}
	if s.calls != nil {
		calls, err := s.calls.Calls(r.Context(), f.Since, f.Until, "", "")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		series := providercalls.DailyByPurpose(calls, s.loc)
		u.Series = &series
	}
	html.Render(w, usageHTML(u))
}

func usageHTML(u usageData) string {
	return html.Page("Usage", func(d *html.Doc) {
		d.Raw(`<h1>Provider calls by purpose</h1>` + "\n" + `<form class="filters" method="get" action="/ui/usage">` + "\n")
		for _, in := range []struct{ label, name, value string }{{"Since", "since", u.Since}, {"Until", "until", u.Until}} {
			d.Raw(`<label>`, in.label, ` <input name="`, in.name, `" placeholder="24h or 2026-01-02T15:04:05Z" value="`)
			d.Esc(in.value)
			d.Raw(`"></label>` + "\n")
		}
		d.Raw(`<button type="submit">Filter</button> <a href="/ui/usage">clear</a>` + "\n" + `</form>` + "\n")
		rows := u.Stats
		if len(rows) > 0 {
			rows = append(slices.Clone(rows), total(rows))
		}
		html.Table(d, len(rows), `<th>purpose</th><th>calls</th><th>failed</th><th>provider time</th><th>tokens in / out</th><th>usage reported</th><th>cost</th>`,
			"No provider call in this range.", func(i int) { usageRow(d, rows[i], u) })
		if u.Series != nil {
			spendchart.Write(d, *u.Series, u.Location)
		}
	})
}

// usageRow writes one purpose's sums; tokens and cost cover only the
// calls that reported usage.
func usageRow(d *html.Doc, s auditlog.Stats, u usageData) {
	cell := func(text string) any { return text }
	if u.Series != nil {
		purpose := s.Group
		if purpose == "all" {
			purpose = ""
		}
		link := spendchart.CallsLink(u.from, u.to, purpose)
		cell = func(text string) any {
			return func() { d.Raw(`<td><a href="`, link, `">`, text, `</a></td>`) }
		}
	}
	d.Cells(s.Group, cell(strconv.FormatInt(s.Calls, 10)), strconv.FormatInt(s.Failed, 10), html.FmtMs(s.ProviderMs),
		cell(fmt.Sprintf("%d / %d", s.InputTokens, s.OutputTokens)), fmt.Sprintf("%d of %d calls", s.Reported, s.Calls),
		cell(fmt.Sprintf("$%.4f", s.CostUSD)))
}

// total sums the purposes' rows into one named "all".
func total(stats []auditlog.Stats) auditlog.Stats {
	t := auditlog.Stats{Group: "all"}
	for _, s := range stats {
		t.Calls, t.Failed, t.ProviderMs = t.Calls+s.Calls, t.Failed+s.Failed, t.ProviderMs+s.ProviderMs
		t.InputTokens, t.OutputTokens = t.InputTokens+s.InputTokens, t.OutputTokens+s.OutputTokens
		t.Reported, t.CostUSD = t.Reported+s.Reported, t.CostUSD+s.CostUSD
	}
	return t
}
