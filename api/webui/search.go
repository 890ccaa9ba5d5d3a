package webui

import (
	"context"
	"fmt"
	"github.com/omega-gateway/omega/domain/sender"
	"net/http"
	"net/url"
	"strings"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/projections/recall"
)

// Recaller searches the full-text index of conversations (recall.Index).
type Recaller interface {
	Search(ctx context.Context, q recall.Query) ([]recall.Hit, error)
}

// searchLimit is how many passages the search page lists.
const searchLimit = 50

type searchData struct {
	Q, Sender string
	Asked     bool
	Hits      []recall.Hit
	Problem   string // a bad input, said on the page
}

// searchPage serves /ui/search: ?q= the words, ?sender= CHANNEL:ID to
// search one person's conversations only. Each passage links to its turn
// (a summary to the turn that began its conversation).
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	d := searchData{Q: strings.TrimSpace(r.URL.Query().Get("q")), Sender: strings.TrimSpace(r.URL.Query().Get("sender"))}
	q := recall.Query{Text: d.Q, Limit: searchLimit}
	if d.Sender != "" {
		ref, err := identity.ParseIdentity(d.Sender)
		if err != nil {
			d.Problem = fmt.Sprintf("sender: %v", err)
		}
		q.Chat = ref.Key()
	}
	if d.Q != "" && d.Problem == "" {
		if len(recall.Terms(d.Q)) == 0 {
			d.Problem = "Nothing to search for: give words of three letters or more, not only common ones."
		} else {
			hits, err := s.recall.Search(r.Context(), q)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			d.Asked, d.Hits = true, hits
		}
	}
	if d.Problem != "" {
		w.WriteHeader(http.StatusBadRequest)
	}
	html.Render(w, searchHTML(d))
}

func searchHTML(s searchData) string {
	return html.Page("Search", func(d *html.Doc) {
		d.Raw(`<h1>Search conversations</h1>` + "\n" + `<form class="filters" method="get" action="/ui/search" role="search">` + "\n")
		d.Raw(`<label>Words <input type="search" name="q" autofocus value="`)
		d.Esc(s.Q)
		d.Raw(`"></label>` + "\n" + `<label>Sender <input name="sender" placeholder="telegram:12345" value="`)
		d.Esc(s.Sender)
		d.Raw(`"></label>` + "\n" + `<button type="submit">Search</button>` + "\n</form>\n")
		if s.Problem != "" {
			d.Raw(`<p class="problem">`)
			d.Esc(s.Problem)
			d.Raw("</p>\n")
			return
		}
		if !s.Asked {
			return
		}
		html.Table(d, len(s.Hits), `<th>when</th><th>chat</th><th>who</th><th>passage</th>`, "No passage matches.", func(i int) {
			h := s.Hits[i]
			turnID := h.TurnID
			if turnID == "" {
				turnID = h.ConversationID
			}
			d.Cells(func() {
				d.Raw(`<td class="when"><time datetime="`, html.ISO(h.At), `">`, html.When(h.At), `</time></td>`)
			}, sender.SenderLabel(h.Chat), h.Kind, func() {
				d.Raw(`<td class="msg hit"><a href="/ui/turns/`, url.PathEscape(turnID), `">`)
				d.Esc(passage(h.Text))
				d.Raw(`</a></td>`)
			})
		})
	})
}

// passage is a hit's text on one line, cut at searchRunes.
func passage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > searchRunes {
		return string(r[:searchRunes-1]) + "…"
	}
	return s
}

const searchRunes = 400

// searchLink leads from a sender's page to the search of their
// conversations.
func searchLink(d *html.Doc, who string) {
	d.Raw(`<p><a class="search-sender" href="/ui/search?sender=`, url.QueryEscape(who), `">Search their conversations</a></p>`+"\n")
}
