// Package buildsui serves the web UI's build pages: the list of builds
// and one build's phases as a timeline, folded from the build streams.
package buildsui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/omega-gateway/omega/api/webui/html"
	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
)

var errNoBuild = errors.New("no such build")

// Log is the event log the builds are folded from.
type Log interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
}

// Decoder turns events into payloads (domain.Registry).
type Decoder interface {
	Decode(e domain.Event) (domain.Payload, error)
}

// Pages serves /ui/builds and /ui/builds/{id}.
type Pages struct {
	log     Log
	decoder Decoder
	fail    func(http.ResponseWriter, *http.Request, error)
}

// New returns the build pages; fail answers a failed read.
func New(log Log, decoder Decoder, fail func(http.ResponseWriter, *http.Request, error)) (*Pages, error) {
	if log == nil || decoder == nil || fail == nil {
		return nil, errors.New("buildsui: log, decoder and fail are required")
	}
	return &Pages{log: log, decoder: decoder, fail: fail}, nil
}

// foldBuild reads one build's stream.
func (s *Pages) foldBuild(ctx context.Context, id string) (builddom.State, error) {
	evs, err := s.log.Load(ctx, builddom.Stream(id), 1)
	if err != nil {
		return builddom.State{}, err
	}
	if len(evs) == 0 {
		return builddom.State{}, errNoBuild
	}
	var st builddom.State
	for _, e := range evs {
		p, err := s.decoder.Decode(e)
		if err != nil {
			return builddom.State{}, fmt.Errorf("build %s@%d: %w", id, e.Version, err)
		}
		st.Apply(p, e.Version, e.RecordedAt)
	}
	return st, nil
}

// List lists the builds, newest first.
func (s *Pages) List(w http.ResponseWriter, r *http.Request) {
	evs, err := s.log.Load(r.Context(), builddom.IndexStream, 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var states []builddom.State
	seen := map[string]bool{} // a resumed build is listed again
	for i := len(evs) - 1; i >= 0; i-- {
		p, err := s.decoder.Decode(evs[i])
		ix, ok := p.(builddom.BuildIndexed)
		if err != nil || !ok || seen[ix.ID] {
			continue
		}
		seen[ix.ID] = true
		st, err := s.foldBuild(r.Context(), ix.ID)
		if errors.Is(err, errNoBuild) {
			continue
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		states = append(states, st)
	}
	html.Render(w, html.Page("Builds", func(d *html.Doc) {
		d.Raw("<h1>Builds</h1>\n")
		html.Table(d, len(states), `<th>build</th><th>status</th><th>phase</th><th>agent calls</th><th>requested</th>`, "No builds yet.", func(i int) {
			st := states[i]
			d.Cells(func() {
				d.Raw(`<td><a href="/ui/builds/`, url.PathEscape(st.Req.ID), `">`)
				d.Esc(st.Req.Name)
				d.Raw(`</a></td>`)
			}, st.Status, phaseOf(st), fmt.Sprintf("%d of at most %d", st.Calls, st.Req.WorstCaseCalls), html.When(st.Requested))
		})
	}))
}

func phaseOf(st builddom.State) string {
	if st.Phase < len(st.Req.Topology.Phases) {
		return st.Req.Topology.Phases[st.Phase].Name
	}
	return "-"
}

// One shows a build's phases as a timeline: each phase's message,
// its agents' calls with their replies, and its artifacts' hashes.
func (s *Pages) One(w http.ResponseWriter, r *http.Request) {
	st, err := s.foldBuild(r.Context(), r.PathValue("id"))
	if errors.Is(err, errNoBuild) {
		html.Error(w, http.StatusNotFound, "No build "+r.PathValue("id")+" is on record.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	html.Render(w, html.Page("Build "+st.Req.Name, func(d *html.Doc) { buildHTML(d, st) }))
}

func buildHTML(d *html.Doc, st builddom.State) {
	req := st.Req
	d.Raw("<h1>Build ")
	d.Esc(req.Name)
	d.Raw(` <span class="badge">`)
	d.Esc(st.Status)
	d.Raw("</span></h1>\n<dl class=\"facts\">")
	for _, f := range [][2]string{{"id", req.ID}, {"request", req.Request}, {"topology", req.Topology.Name + " " + req.TopologyHash},
		{"agent calls", fmt.Sprintf("%d of at most %d", st.Calls, req.WorstCaseCalls)}, {"requested", html.When(st.Requested)},
		{"reason", st.Reason}, {"summary", st.Summary}} {
		if f[1] == "" {
			continue
		}
		d.Raw("<dt>", f[0], "</dt><dd>")
		d.Esc(f[1])
		d.Raw("</dd>")
	}
	d.Raw("</dl>\n<ol class=\"timeline\">\n")
	for i, p := range st.Phases {
		phaseHTML(d, i, p)
	}
	d.Raw("</ol>\n")
}

func phaseHTML(d *html.Doc, i int, p builddom.PhaseRecord) {
	class := "ev-provider"
	switch p.Status {
	case builddom.StatusCompleted:
		class = "ev-done"
	case builddom.StatusFailed:
		class = "ev-failed"
	}
	d.Raw(`<li class="ev `, class, `"><div class="ev-head"><span class="rel">`, strconv.Itoa(i+1), `</span> <strong class="type">`)
	d.Esc(p.Name)
	d.Raw(`</strong> <span class="summary">`)
	d.Esc(fmt.Sprintf("%s · %s · %s", p.Type, p.Status, html.When(p.Started)))
	if p.Iterations > 0 {
		d.Esc(fmt.Sprintf(" · %d fix(es)", p.Iterations))
	}
	d.Raw("</span></div>\n")
	for _, line := range []string{p.Notice, p.Reason} {
		if line != "" {
			d.Raw(`<p>`)
			d.Esc(line)
			d.Raw("</p>\n")
		}
	}
	for _, c := range p.Calls {
		reply, label := "(no reply recorded)", "no reply"
		if c.Replied != nil {
			reply, label = c.Replied.Text, fmt.Sprintf("%d bytes", len(c.Replied.Text))
			if c.Replied.Error != "" {
				reply, label = c.Replied.Error, "failed"
			}
		}
		d.Raw(`<details class="call"><summary>`)
		d.Esc(fmt.Sprintf("call %d · %s (%s) · %s", c.Called.Call, c.Called.Agent, c.Called.Role, label))
		d.Raw(`</summary><pre>`)
		d.Esc(reply)
		d.Raw("</pre></details>\n")
	}
	paths := make([]string, 0, len(p.Artifacts))
	for path := range p.Artifacts {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		d.Raw(`<table class="artifacts"><thead><tr><th>artifact</th><th>sha256</th></tr></thead><tbody>`)
		for _, path := range paths {
			d.Cells(path, p.Artifacts[path])
		}
		d.Raw("</tbody></table>\n")
	}
	d.Raw("</li>\n")
}
