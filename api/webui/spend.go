package webui

import (
	"context"
	"fmt"
	"github.com/omega-gateway/omega/domain/sender"
	"net/http"
	"strconv"
	"time"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/projections/providercalls"
)

// Calls lists provider calls (providercalls.Queries).
type Calls interface {
	Calls(ctx context.Context, since, until time.Time, purpose, sender string) ([]providercalls.Call, error)
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
	html.Render(w, html.Page("Provider calls", func(d *html.Doc) {
		var sum providercalls.Total
		for _, c := range calls {
			sum.Calls, sum.Tokens, sum.USD = sum.Calls+1, sum.Tokens+c.Tokens, sum.USD+c.USD
		}
		d.Raw(`<h1>Provider calls</h1><p class="muted">`)
		d.Esc(fmt.Sprintf("since %s until %s, purpose %s: %d calls, %d tokens, $%.4f", orAny(q["since"]), orAny(q["until"]), orAny(purpose), sum.Calls, sum.Tokens, sum.USD))
		d.Raw("</p>\n")
		html.Table(d, len(calls), `<th>position</th><th>at</th><th>purpose</th><th>sender</th><th>model</th><th>tokens</th><th>cost</th><th>failed</th>`,
			"No provider call in this range.", func(i int) {
				c := calls[i]
				d.Cells(strconv.FormatInt(c.Position, 10), html.When(c.At), c.Purpose, sender.SenderLabel(c.Sender), c.Model, strconv.FormatInt(c.Tokens, 10),
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
