package webui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// States folds what omega knew about a sender at a moment (asof.Reader).
type States interface {
	At(ctx context.Context, who sender.SenderRef, at asof.Moment) (asof.State, error)
}

// asOf reads the sender page's "as of" moment (?at=, a datetime-local
// value in the owner's zone, or RFC 3339); false when none was asked.
func (s *Server) asOf(r *http.Request) (time.Time, bool, error) {
	at := r.URL.Query().Get("at")
	if at == "" || s.states == nil {
		return time.Time{}, false, nil
	}
	t, ok := asof.ParseTime(at, s.loc)
	if !ok {
		return t, false, fmt.Errorf("%w: at=%q is not a time (2026-11-20T14:00 in %s, or RFC 3339)", auditlog.ErrBadFilter, at, s.loc)
	}
	return t, true, nil
}

// senderAsOf fills the sender page with the state at a moment, folded
// from the log, in place of the read models' present.
func (s *Server) senderAsOf(ctx context.Context, data *senderData, at time.Time) error {
	st, err := s.states.At(ctx, sender.SenderRef{Channel: data.Channel, ID: data.ID}, asof.Moment{At: at})
	if err != nil {
		return err
	}
	v := auditlog.SenderView{Key: data.View.Key, Channel: data.Channel, SenderID: data.ID, Name: st.Name,
		Language: st.Language, Personality: st.Personality, Known: st.Known}
	for _, f := range st.Facts {
		v.Facts = append(v.Facts, auditlog.SenderFact{Key: f[0], Value: f[1]})
	}
	for _, t := range st.Tasks {
		v.Tasks = append(v.Tasks, auditlog.SenderTask{ID: t.ID, Description: t.Description, Repeat: t.Repeat, Kind: t.Kind, Project: t.Project, Due: t.Due})
	}
	if st.Session != "" {
		v.Sessions = []auditlog.SenderSession{{Project: st.Project, SessionID: st.Session}}
	}
	data.View, data.State = v, &st
	if data.Heartbeat != nil && len(st.Heartbeat) > 0 {
		g := st.Heartbeat[0]
		data.Heartbeat = &heartbeat.Heartbeat{Items: g.Items, Interval: g.Interval, Suppressed: g.Suppressed}
	}
	return nil
}

// asOfHTML writes the "as of" control and, on a page of the past, what
// only the fold knows: the moment, the project and the open conversation.
func asOfHTML(d *html.Doc, s senderData) {
	value := ""
	if s.State != nil {
		value = s.State.At.In(s.Loc).Format("2006-01-02T15:04:05")
	}
	d.Raw(`<form class="asof" method="get"><label>As of <input type="datetime-local" step="1" name="at" value="`)
	d.Esc(value)
	d.Raw(`"></label> <button type="submit">Show</button> <a href="`)
	d.Esc(html.SenderURL(s.Channel, s.ID))
	d.Raw(`">now</a></form>` + "\n")
	st := s.State
	if st == nil {
		return
	}
	d.Raw(`<p class="asof-note" id="asof">What omega knew at <time datetime="`, html.ISO(st.At), `">`)
	d.Esc(st.At.In(s.Loc).Format("2006-01-02 15:04:05 MST"))
	d.Raw(`</time>, folded from the log. Project: `)
	d.Esc(html.OrDash(st.Project))
	d.Raw(". Conversation: ")
	switch c := st.Conversation; {
	case c == nil:
		d.Raw("none.")
	case st.Next.ConversationID == c.ID:
		d.Raw(`open (<code>`)
		d.Esc(c.ID)
		d.Raw(`</code>, last message `)
		d.Esc(html.When(c.LastAt))
		d.Raw(" UTC).")
	default:
		d.Raw(`closed or idle; a message then started a new one.`)
	}
	d.Raw("</p>\n")
}
