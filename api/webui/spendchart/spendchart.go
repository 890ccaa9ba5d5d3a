// Package spendchart draws the usage page's spend over time: tokens per
// day stacked by purpose, as an SVG chart and as a table, each number
// linking to the provider calls it sums.
package spendchart

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/projections/providercalls"
)

// purposeColors tell the purposes apart in the chart, in usage.Purposes'
// order; another purpose gets grey.
var purposeColors = map[string]string{
	"turn": "#2a5bd7", "plan_step": "#7c5cd6", "classifier": "#0f8b8d", "heartbeat": "#d97706",
	"summary": "#2f9e44", "facts": "#b42318", "self_heal": "#6b7280",
}

// CallsLink is the calls page for a day (in loc; "" any) and purpose ("" any).
func CallsLink(since, until time.Time, purpose string) string {
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

// Write writes spend over time by purpose: an SVG bar per day
// stacked by purpose (tokens), then the same numbers as a table, each
// linking to the calls it sums.
func Write(d *html.Doc, s providercalls.Series, loc *time.Location) {
	d.Raw("<h2>Tokens per day by purpose</h2>\n")
	if len(s.Days) == 0 {
		d.Raw(`<p class="muted">No provider call in this range.</p>` + "\n")
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
	d.Raw(fmt.Sprintf(`<svg class="chart" role="img" aria-label="tokens per day by purpose" width="%d" height="%d" viewBox="0 0 %d %d">`, w, h+20, w, h+20))
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
			d.Raw(fmt.Sprintf(`<a href="%s"><rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>`, CallsLink(start, start.AddDate(0, 0, 1), p), x, y, bar, bh, color(p)))
			d.Esc(fmt.Sprintf("%s %s: %d tokens, %d calls", day, p, t.Tokens, t.Calls))
			d.Raw(`</title></rect></a>`)
		}
		d.Raw(fmt.Sprintf(`<text x="%d" y="%d" font-size="9">`, x, h+14))
		d.Esc(day[5:])
		d.Raw(`</text>`)
	}
	d.Raw("</svg>\n")
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
func spendTable(d *html.Doc, s providercalls.Series, loc *time.Location) {
	head := `<th>day</th>`
	for _, p := range s.Purposes {
		head += fmt.Sprintf(`<th><span style="color:%s">■</span> %s</th>`, color(p), p)
	}
	html.Table(d, len(s.Days), head, "", func(i int) {
		day := s.Days[i]
		start, _ := time.ParseInLocation(time.DateOnly, day, loc)
		cells := []any{day}
		for _, p := range s.Purposes {
			t := s.Of[day][p]
			link := CallsLink(start, start.AddDate(0, 0, 1), p)
			cells = append(cells, func() {
				d.Raw(`<td class="num"><a href="`, link, `">`, strconv.FormatInt(t.Tokens, 10), ` tok / `, strconv.FormatInt(t.Calls, 10), ` calls</a></td>`)
			})
		}
		d.Cells(cells...)
	})
}
