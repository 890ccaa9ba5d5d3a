package webui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	builddom "github.com/omega-gateway/omega/domain/build"
)

var errNoBuild = errors.New("no such build")

// foldBuild reads one build's stream.
func (s *Server) foldBuild(ctx context.Context, id string) (builddom.State, error) {
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

// buildsPage lists the builds, newest first.
func (s *Server) buildsPage(w http.ResponseWriter, r *http.Request) {
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
	render(w, page("Builds", func(d *doc) {
		d.raw("<h1>Builds</h1>\n")
		table(d, len(states), `<th>build</th><th>status</th><th>phase</th><th>agent calls</th><th>requested</th>`, "No builds yet.", func(i int) {
			st := states[i]
			d.cells(func() {
				d.raw(`<td><a href="/ui/builds/`, url.PathEscape(st.Req.ID), `">`)
				d.esc(st.Req.Name)
				d.raw(`</a></td>`)
			}, st.Status, phaseOf(st), fmt.Sprintf("%d of at most %d", st.Calls, st.Req.WorstCaseCalls), when(st.Requested))
		})
	}))
}

func phaseOf(st builddom.State) string {
	if st.Phase < len(st.Req.Topology.Phases) {
		return st.Req.Topology.Phases[st.Phase].Name
	}
	return "-"
}

// buildPage shows a build's phases as a timeline: each phase's message,
// its agents' calls with their replies, and its artifacts' hashes.
func (s *Server) buildPage(w http.ResponseWriter, r *http.Request) {
	st, err := s.foldBuild(r.Context(), r.PathValue("id"))
	if errors.Is(err, errNoBuild) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	render(w, page("Build "+st.Req.Name, func(d *doc) { buildHTML(d, st) }))
}

func buildHTML(d *doc, st builddom.State) {
	req := st.Req
	d.raw("<h1>Build ")
	d.esc(req.Name)
	d.raw(` <span class="badge">`)
	d.esc(st.Status)
	d.raw("</span></h1>\n<dl class=\"facts\">")
	for _, f := range [][2]string{{"id", req.ID}, {"request", req.Request}, {"topology", req.Topology.Name + " " + req.TopologyHash},
		{"agent calls", fmt.Sprintf("%d of at most %d", st.Calls, req.WorstCaseCalls)}, {"requested", when(st.Requested)},
		{"reason", st.Reason}, {"summary", st.Summary}} {
		if f[1] == "" {
			continue
		}
		d.raw("<dt>", f[0], "</dt><dd>")
		d.esc(f[1])
		d.raw("</dd>")
	}
	d.raw("</dl>\n<ol class=\"timeline\">\n")
	for i, p := range st.Phases {
		phaseHTML(d, i, p)
	}
	d.raw("</ol>\n")
}

func phaseHTML(d *doc, i int, p builddom.PhaseRecord) {
	class := "ev-provider"
	switch p.Status {
	case builddom.StatusCompleted:
		class = "ev-done"
	case builddom.StatusFailed:
		class = "ev-failed"
	}
	d.raw(`<li class="ev `, class, `"><div class="ev-head"><span class="rel">`, strconv.Itoa(i+1), `</span> <strong class="type">`)
	d.esc(p.Name)
	d.raw(`</strong> <span class="summary">`)
	d.esc(fmt.Sprintf("%s · %s · %s", p.Type, p.Status, when(p.Started)))
	if p.Iterations > 0 {
		d.esc(fmt.Sprintf(" · %d fix(es)", p.Iterations))
	}
	d.raw("</span></div>\n")
	for _, line := range []string{p.Notice, p.Reason} {
		if line != "" {
			d.raw(`<p>`)
			d.esc(line)
			d.raw("</p>\n")
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
		d.raw(`<details class="call"><summary>`)
		d.esc(fmt.Sprintf("call %d · %s (%s) · %s", c.Called.Call, c.Called.Agent, c.Called.Role, label))
		d.raw(`</summary><pre>`)
		d.esc(reply)
		d.raw("</pre></details>\n")
	}
	paths := make([]string, 0, len(p.Artifacts))
	for path := range p.Artifacts {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		d.raw(`<table class="artifacts"><thead><tr><th>artifact</th><th>sha256</th></tr></thead><tbody>`)
		for _, path := range paths {
			d.cells(path, p.Artifacts[path])
		}
		d.raw("</tbody></table>\n")
	}
	d.raw("</li>\n")
}
