package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/omega-gateway/omega/projections/providercalls"
)

// Calls lists provider calls (providercalls.Queries).
type Calls interface {
	Calls(ctx context.Context, since, until time.Time, purpose, sender string) ([]providercalls.Call, error)
}

// purposeColors tell the purposes apart in the chart, in usage.Purposes'
// order; another purpose gets grey.
var purposeColors = map[string]string{
	"turn": "#2a5bd7", "plan_step": "#7c5cd6", "classifier": "#0f8b8d", "heartbeat": "#d97706",
	"summary": "#2f9e44", "facts": "#b42318", "self_heal": "#6b7280",
}

// callsLink is the calls page for a day (in loc; "" any) and purpose ("" any).
func callsLink(since, until time.Time, purpose string) string {
	v := url.Values{}
	if !since.IsZero() {
		v.Set("since", since.UTC().Format(time.RFC3339))
	}
	if !until.IsZero() {
		v.Set("until", until.UTC().Format(time.RFC3339))
	}
	if purpose != "" {
		v.Set("purpose", purpose)
	}
	return "/ui/calls?" + v.Encode()
}

// spendChart writes spend over time by purpose: an SVG bar per day
// stacked by purpose (tokens), then the same numbers as a table, each
// linking to the calls it sums.
func spendChart(d *doc, s providercalls.Series, loc *time.Location) {
	d.raw("<h2>Tokens per day by purpose</h2>\n")
	if len(s.Days) == 0 {
		d.raw(`<p class="muted">No provider call in this range.</p>` + "\n")
		return
	}
	var most int64 = 1
	for _, day := range s.Days {
		var sum int64
		for _, t := range s.Of[day] {
			sum += t.Tokens
		}
		most = max(most, sum)
	}
	const h, bar, gap = 160, 28, 10
	w := len(s.Days)*(bar+gap) + gap
	d.raw(fmt.Sprintf(`<svg class="chart" role="img" aria-label="tokens per day by purpose" width="%d" height="%d" viewBox="0 0 %d %d">`, w, h+20, w, h+20))
	for i, day := range s.Days {
		x, y := gap+i*(bar+gap), h
		start, _ := time.ParseInLocation(time.DateOnly, day, loc)
		for _, p := range s.Purposes {
			t, ok := s.Of[day][p]
			if !ok || t.Tokens == 0 {
				continue
			}
			bh := int(t.Tokens * (h - 10) / most)
			y -= bh
			d.raw(fmt.Sprintf(`<a href="%s"><rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>`, callsLink(start, start.AddDate(0, 0, 1), p), x, y, bar, bh, color(p)))
			d.esc(fmt.Sprintf("%s %s: %d tokens, %d calls", day, p, t.Tokens, t.Calls))
			d.raw(`</title></rect></a>`)
		}
		d.raw(fmt.Sprintf(`<text x="%d" y="%d" font-size="9">`, x, h+14))
		d.esc(day[5:])
		d.raw(`</text>`)
	}
	d.raw("</svg>\n")
	spendTable(d, s, loc)
}

func color(purpose string) string {
	if c, ok := purposeColors[purpose]; ok {
		return c
	}
	return "#9ca3af"
}

// spendTable is the chart's numbers: tokens and calls per day and
// purpose, each a link to its calls.
func spendTable(d *doc, s providercalls.Series, loc *time.Location) {
	head := `<th>day</th>`
	for _, p := range s.Purposes {
		head += fmt.Sprintf(`<th><span style="color:%s">■</span> %s</th>`, color(p), p)
	}
	table(d, len(s.Days), head, "", func(i int) {
		day := s.Days[i]
		start, _ := time.ParseInLocation(time.DateOnly, day, loc)
		cells := []any{day}
		for _, p := range s.Purposes {
			t := s.Of[day][p]
			link := callsLink(start, start.AddDate(0, 0, 1), p)
			cells = append(cells, func() {
				d.raw(`<td class="num"><a href="`, link, `">`, strconv.FormatInt(t.Tokens, 10), ` tok / `, strconv.FormatInt(t.Calls, 10), ` calls</a></td>`)
			})
		}
		d.cells(cells...)
	})
}

// callsPage serves /ui/calls: every provider call of the range (and
// purpose and sender, where given), with its tokens and cost and their sum.
func (s *Server) callsPage(w http.ResponseWriter, r *http.Request) {
	if s.calls == nil {
		http.NotFound(w, r)
		return
	}
	f, q, err := filterOf(r, s.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	purpose := r.URL.Query().Get("purpose")
	calls, err := s.calls.Calls(r.Context(), f.Since, f.Until, purpose, r.URL.Query().Get("sender_key"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	render(w, page("Provider calls", func(d *doc) {
		var sum providercalls.Total
		for _, c := range calls {
			sum.Calls, sum.Tokens, sum.USD = sum.Calls+1, sum.Tokens+c.Tokens, sum.USD+c.USD
		}
		d.raw(`<h1>Provider calls</h1><p class="muted">`)
		d.esc(fmt.Sprintf("since %s until %s, purpose %s: %d calls, %d tokens, $%.4f", orAny(q["since"]), orAny(q["until"]), orAny(purpose), sum.Calls, sum.Tokens, sum.USD))
		d.raw("</p>\n")
		table(d, len(calls), `<th>position</th><th>at</th><th>purpose</th><th>sender</th><th>model</th><th>tokens</th><th>cost</th><th>failed</th>`,
			"No provider call in this range.", func(i int) {
				c := calls[i]
				d.cells(strconv.FormatInt(c.Position, 10), when(c.At), c.Purpose, c.Sender, c.Model, strconv.FormatInt(c.Tokens, 10),
					fmt.Sprintf("$%.4f", c.USD), strconv.FormatBool(c.Failed))
			})
	}))
}

func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}
