package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/projections/auditlog"
)

type auditData struct {
	Title    string
	Q        map[string]string
	Statuses []string
	Rows     []auditlog.Row
	Next     string // URL of the next page
	LiveOn   bool   // the first page updates itself
	Live     string // the filter's query, for the live updates
	Top      string // newest turn shown
	Channels []ChannelStatus
	Now      time.Time
}

// filterOf reads the audit filter from a request's query.
func filterOf(r *http.Request, now time.Time) (auditlog.Filter, map[string]string, error) {
	q := map[string]string{}
	for _, p := range audit.Params {
		q[p] = strings.TrimSpace(r.URL.Query().Get(p))
	}
	f, err := audit.ParseFilter(func(name string) string { return q[name] }, now)
	return f, q, err
}

// liveQuery is the filter's query without the page position.
func liveQuery(q map[string]string) string {
	v := url.Values{}
	for k, val := range q {
		if val != "" && k != "after" {
			v.Set(k, val)
		}
	}
	return v.Encode()
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) {
	f, q, err := filterOf(r, s.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := s.audit.Query(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := auditData{Title: "Audit", Q: q, Statuses: auditlog.Statuses(), Rows: page.Rows, Now: s.Now()}
	if s.channels != nil {
		d.Channels = s.channels()
	}
	if page.Next != "" {
		v, _ := url.ParseQuery(liveQuery(q))
		v.Set("after", page.Next)
		d.Next = "/ui/?" + v.Encode()
	}
	if q["after"] == "" {
		d.LiveOn, d.Live = true, liveQuery(q)
		if len(page.Rows) > 0 {
			d.Top = page.Rows[0].TurnID
		}
	}
	html.Render(w, auditHTML(d))
}

// rows serves the first page's table rows, for the live update.
func (s *Server) rows(w http.ResponseWriter, r *http.Request) {
	f, _, err := filterOf(r, s.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f.After = ""
	page, err := s.audit.Query(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	html.Render(w, rowsFragment(page.Rows))
}

// events streams Server-Sent Events: "audit" whenever the newest turn the
// filter selects changes (from top=, the one the page shows).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	f, _, err := filterOf(r, s.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f.After, f.Limit = "", 1
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	ctx := r.Context()
	var changed <-chan struct{}
	if s.changed != nil {
		changed = s.changed(ctx)
	}
	poll := time.NewTicker(s.PollEvery)
	defer poll.Stop()
	top := r.URL.Query().Get("top")
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	for idle := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-changed:
		case <-poll.C:
			if idle++; idle%8 == 0 {
				// A comment keeps proxies from closing an idle stream.
				fmt.Fprint(w, ": ping\n\n")
				flusher.Flush()
			}
		}
		page, err := s.audit.Query(ctx, f)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("webui: live audit query failed", "err", err)
			}
			continue
		}
		if len(page.Rows) == 0 || page.Rows[0].TurnID == top {
			continue
		}
		top = page.Rows[0].TurnID
		fmt.Fprintf(w, "event: audit\ndata: %s\n\n", top)
		flusher.Flush()
	}
}

type turnData struct {
	Title string
	ID    string
	Row   auditlog.Row
	Done  bool
	// Live shows the running turn's reply as it is written.
	Live   bool
	Events []timelineEntry
}

func (s *Server) turnPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	evs, err := s.log.Load(r.Context(), domain.TurnStream(id), 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(evs) == 0 {
		html.Error(w, http.StatusNotFound, "No turn "+id+" is on record.")
		return
	}
	row, done, err := s.audit.Turn(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !done {
		// Not completed yet: show who sent it from the first event.
		row = auditlog.Row{TurnID: id, Channel: evs[0].Metadata.Channel, SenderID: evs[0].Metadata.Sender, Status: "open"}
	}
	html.Render(w, turnHTML(turnData{Title: "Turn " + audit.ShortID(id), ID: id, Row: row, Done: done, Live: !done && s.stream != nil,
		Events: s.timeline(r.Context(), evs)}))
}

type senderData struct {
	Title   string
	Channel string
	ID      string
	View    auditlog.SenderView
	Turns   []auditlog.Row
	// Heartbeat is the global checklist; nil when the heartbeat is off.
	Heartbeat *heartbeat.Heartbeat
	// State is the page's past moment ("as of"), nil for the present;
	// Loc is the owner's zone the control reads and shows.
	State *asof.State
	Loc   *time.Location
}

func (s *Server) senderPage(w http.ResponseWriter, r *http.Request) {
	channel, id := r.PathValue("channel"), r.PathValue("id")
	key := sender.SenderKey(channel, id)
	view, err := s.audit.Sender(r.Context(), key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	at, past, err := s.asOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := senderData{Title: channel + ":" + id, Channel: channel, ID: id, View: view}
	if s.states != nil {
		data.Loc = s.loc
	}
	if s.checks != nil {
		hb, err := s.checks.Load(r.Context(), heartbeat.GlobalHeartbeat)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		data.Heartbeat = &hb
	}
	filter := auditlog.Filter{Sender: key, Limit: 20}
	if past {
		// First: the state of the moment waits for the read models to show
		// the log, and the turns listed below come from them.
		if err := s.senderAsOf(r.Context(), &data, at); err != nil {
			s.fail(w, r, err)
			return
		}
		filter.Until = at.Add(time.Microsecond)
	}
	page, err := s.audit.Query(r.Context(), filter)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data.Turns = page.Rows
	html.Render(w, senderHTML(data))
}
