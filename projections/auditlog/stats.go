package auditlog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
)

// Stats sums the audit rows of one group. Token and cost sums cover
// only the turns whose provider reported usage (Reported of Turns); the
// rest are unknown, not zero.
type Stats struct {
	Group        string  `json:"group,omitempty"`
	Turns        int64   `json:"turns"`
	Answered     int64   `json:"answered"`
	Denied       int64   `json:"denied"`
	Failed       int64   `json:"failed"`
	Suppressed   int64   `json:"suppressed"`
	Acknowledged int64   `json:"acknowledged"`
	LatencyP50Ms int64   `json:"latency_p50_ms"`
	LatencyP95Ms int64   `json:"latency_p95_ms"`
	ProviderMs   int64   `json:"provider_ms"`
	Calls        int64   `json:"calls"`
	Reported     int64   `json:"usage_reported_turns"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// add counts one turn.
func (g *Stats) add(status string, acked bool, providerMs, calls int64, reported bool, in, out int64, cost float64) {
	g.Turns++
	switch Status(status) {
	case "answered":
		g.Answered++
	case "denied":
		g.Denied++
	case "failed":
		g.Failed++
	case "suppressed":
		g.Suppressed++
	}
	if acked {
		g.Acknowledged++
	}
	g.ProviderMs += providerMs
	g.Calls += calls
	if reported {
		g.Reported++
		g.InputTokens += in
		g.OutputTokens += out
		g.CostUSD += cost
	}
}

// Stats groups.
const (
	ByNone   = ""
	ByDay    = "day"
	BySender = "sender"
	ByModel  = "model"
	// ByPurpose sums every provider call (not only turns') by what it was
	// for; its groups count calls, not turns.
	ByPurpose = "purpose"
)

// Stats sums the rows f selects (its Limit and After are ignored), one
// Stats per group of by (ByDay in UTC), groups in order.
func (a *Queries) Stats(ctx context.Context, f Filter, by string) ([]Stats, error) {
	if by == ByPurpose {
		return a.purposeStats(ctx, f)
	}
	if by != ByNone && by != ByDay && by != BySender && by != ByModel {
		return nil, fmt.Errorf("%w: --by %q: want day, sender, model or purpose", ErrBadFilter, by)
	}
	f.Limit, f.After = 0, ""
	where, args, err := f.where()
	if err != nil {
		return nil, err
	}
	// Percentiles need every latency; summing in Go keeps one query that
	// both backends run alike.
	rows, err := a.db.QueryContext(ctx, `SELECT at, sender, model, status, acked, latency_ms, duration_ms, calls,
		usage_reported, input_tokens, output_tokens, cost_usd FROM audit`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("audit stats: %w", err)
	}
	defer rows.Close()
	groups := map[string]*Stats{}
	latencies := map[string][]int64{}
	for rows.Next() {
		var at, latency, providerMs, calls, in, out int64
		var snd, model, status string
		var acked, reported int
		var cost float64
		if err := rows.Scan(&at, &snd, &model, &status, &acked, &latency, &providerMs, &calls, &reported, &in, &out, &cost); err != nil {
			return nil, fmt.Errorf("scan audit stats: %w", err)
		}
		key := map[string]string{ByNone: "", ByDay: time.UnixMicro(at).UTC().Format(time.DateOnly), BySender: sender.SenderLabel(snd), ByModel: model}[by]
		g := groups[key]
		if g == nil {
			g = &Stats{Group: key}
			groups[key] = g
		}
		g.add(status, acked == 1, providerMs, calls, reported == 1, in, out, cost)
		latencies[key] = append(latencies[key], latency)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read audit stats: %w", err)
	}
	out := make([]Stats, 0, len(groups))
	for key, g := range groups {
		l := latencies[key]
		slices.Sort(l)
		g.LatencyP50Ms, g.LatencyP95Ms = percentile(l, 50), percentile(l, 95)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Stats) int { return cmp.Compare(a.Group, b.Group) })
	return out, nil
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// purposeStats sums the provider calls of f's time range by purpose:
// Calls, Failed, ProviderMs, Reported (calls that reported usage) and the
// tokens and cost they reported. Only the time range applies: a
// heartbeat or a self-heal call belongs to no sender, model or turn.
func (a *Queries) purposeStats(ctx context.Context, f Filter) ([]Stats, error) {
	if f.Sender != "" || f.Channel != "" || f.Status != "" || f.Model != "" || f.Project != "" || f.Grep != "" {
		return nil, fmt.Errorf("%w: --by purpose takes only --since and --until", ErrBadFilter)
	}
	where, args, err := Filter{Since: f.Since, Until: f.Until}.where()
	if err != nil {
		return nil, err
	}
	rows, err := a.db.QueryContext(ctx, `SELECT purpose, count(*), sum(failed), sum(duration_ms), sum(usage_reported),
		sum(input_tokens), sum(output_tokens), sum(cost_usd) FROM provider_calls`+where+` GROUP BY purpose ORDER BY purpose`, args...)
	if err != nil {
		return nil, fmt.Errorf("audit stats by purpose: %w", err)
	}
	defer rows.Close()
	var out []Stats
	for rows.Next() {
		var s Stats
		if err := rows.Scan(&s.Group, &s.Calls, &s.Failed, &s.ProviderMs, &s.Reported, &s.InputTokens, &s.OutputTokens, &s.CostUSD); err != nil {
			return nil, fmt.Errorf("scan audit stats by purpose: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read audit stats by purpose: %w", err)
	}
	return out, nil
}
