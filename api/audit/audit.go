// Package audit turns an operator's audit question (CLI flags or HTTP
// query parameters) into an auditlog.Filter (projections/auditlog answers
// it), and writes the answer as a table, JSON or CSV.
package audit

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// Params are the filter's parameter names, shared by the CLI's flags and
// the HTTP API's query.
var Params = []string{"sender", "channel", "since", "until", "status", "model", "project", "grep", "limit", "after"}

// Formats of an answer.
const (
	Table = "table"
	JSON  = "json"
	CSV   = "csv"
)

// ParseFilter builds a filter from named parameter values; get returns ""
// for one not given. Times are RFC 3339 or a duration back from now.
func ParseFilter(get func(string) string, now time.Time) (auditlog.Filter, error) {
	f := auditlog.Filter{
		Channel: get("channel"), Status: get("status"), Model: get("model"),
		Project: get("project"), Grep: get("grep"), After: get("after"),
	}
	if s := get("sender"); s != "" {
		channel, id, ok := strings.Cut(s, ":")
		if !ok || channel == "" || id == "" {
			return f, fmt.Errorf("%w: sender %q: want CHANNEL:ID, e.g. telegram:12345", auditlog.ErrBadFilter, s)
		}
		f.Sender = sender.SenderKey(channel, id)
	}
	if f.Status != "" && !slices.Contains(auditlog.Statuses(), f.Status) {
		return f, fmt.Errorf("%w: status %q: want one of %s", auditlog.ErrBadFilter, f.Status, strings.Join(auditlog.Statuses(), ", "))
	}
	var err error
	if f.Since, err = parseTime("since", get("since"), now); err != nil {
		return f, err
	}
	if f.Until, err = parseTime("until", get("until"), now); err != nil {
		return f, err
	}
	if s := get("limit"); s != "" {
		if f.Limit, err = strconv.Atoi(s); err != nil || f.Limit < 1 {
			return f, fmt.Errorf("%w: limit %q: want a positive number", auditlog.ErrBadFilter, s)
		}
	}
	return f, nil
}

// CheckAnswer refuses an answer format or stats grouping that does not
// exist, so that a command can say so before it opens any store.
func CheckAnswer(format, by string) error {
	if !slices.Contains([]string{"", Table, JSON, CSV}, format) {
		return fmt.Errorf("%w: format %q: want table, json or csv", auditlog.ErrBadFilter, format)
	}
	if !slices.Contains([]string{auditlog.ByNone, auditlog.ByDay, auditlog.BySender, auditlog.ByModel, auditlog.ByPurpose}, by) {
		return fmt.Errorf("%w: --by %q: want day, sender, model or purpose", auditlog.ErrBadFilter, by)
	}
	return nil
}

func parseTime(name, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%w: %s %q: want RFC 3339 (2026-01-02T15:04:05Z) or a duration (24h)", auditlog.ErrBadFilter, name, s)
}

// WriteRows writes rows in format: JSON is one array, CSV has a header.
func WriteRows(w io.Writer, format string, rows []auditlog.Row) error {
	switch format {
	case JSON:
		return writeArray(w, rows)
	case CSV:
		return writeCSV(w, rows)
	case Table, "":
		return writeTable(w, rows)
	}
	return fmt.Errorf("%w: format %q: want table, json or csv", auditlog.ErrBadFilter, format)
}

// writeArray writes one indented JSON array, [] when empty.
func writeArray[T any](w io.Writer, items []T) error {
	if items == nil {
		items = []T{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(items)
}

var csvHeader = []string{"turn_id", "at", "received_at", "channel", "sender_id", "project", "conversation_id", "status", "outcome",
	"acknowledged", "provider", "model", "latency_ms", "provider_ms", "calls", "prompt_bytes", "reply_bytes",
	"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "input", "output"}

func writeCSV(w io.Writer, rows []auditlog.Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.TurnID, r.At.Format(time.RFC3339Nano), r.ReceivedAt.Format(time.RFC3339Nano), r.Channel, r.SenderID,
			r.Project, r.ConversationID, r.Status, r.Outcome, strconv.FormatBool(r.Acknowledged), r.Provider, r.Model,
			i64(r.LatencyMs), i64(r.ProviderMs), i64(r.Calls), i64(r.PromptBytes), i64(r.ReplyBytes),
			opt(r.InputTokens), opt(r.OutputTokens), opt(r.CacheReadTokens), opt(r.CacheWriteTokens), cost(r.CostUSD), r.Input, r.Output}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// opt is "" for a count the provider did not report.
func opt(n *int64) string {
	if n == nil {
		return ""
	}
	return i64(*n)
}

func cost(c *float64) string {
	if c == nil {
		return ""
	}
	return strconv.FormatFloat(*c, 'f', -1, 64)
}

func writeTable(w io.Writer, rows []auditlog.Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tTURN\tSENDER\tSTATUS\tMODEL\tLATENCY\tTOKENS IN/OUT\tCOST\tMESSAGE")
	for _, r := range rows {
		status := r.Status
		if r.Acknowledged {
			status += " (acked)"
		}
		tokens := "-"
		if r.InputTokens != nil {
			tokens = i64(*r.InputTokens) + "/" + i64(*r.OutputTokens)
		}
		c := "-"
		if r.CostUSD != nil {
			c = fmt.Sprintf("$%.4f", *r.CostUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s:%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.At.Local().Format("2006-01-02 15:04:05"), ShortID(r.TurnID),
			r.Channel, r.SenderID, status, dash(r.Model), time.Duration(r.LatencyMs)*time.Millisecond, tokens, c, oneLine(r.Input, 60))
	}
	return tw.Flush()
}

// ShortID is the first 8 characters of a turn id, as people quote them.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine folds s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteStats writes stats in format.
func WriteStats(w io.Writer, format string, stats []auditlog.Stats) error {
	switch format {
	case JSON:
		return writeArray(w, stats)
	case CSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"group", "turns", "answered", "denied", "failed", "suppressed", "acknowledged", "latency_p50_ms",
			"latency_p95_ms", "provider_ms", "calls", "usage_reported_turns", "input_tokens", "output_tokens", "cost_usd"})
		for _, s := range stats {
			_ = cw.Write([]string{s.Group, i64(s.Turns), i64(s.Answered), i64(s.Denied), i64(s.Failed), i64(s.Suppressed),
				i64(s.Acknowledged), i64(s.LatencyP50Ms), i64(s.LatencyP95Ms), i64(s.ProviderMs), i64(s.Calls), i64(s.Reported),
				i64(s.InputTokens), i64(s.OutputTokens), strconv.FormatFloat(s.CostUSD, 'f', -1, 64)})
		}
		cw.Flush()
		return cw.Error()
	case Table, "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GROUP\tTURNS\tANSWERED\tDENIED\tFAILED\tP50\tP95\tPROVIDER TIME\tTOKENS IN/OUT\tCOST")
		for _, s := range stats {
			// Tokens and cost cover only the turns whose provider reported
			// usage; say how many that was.
			tokens := fmt.Sprintf("%d/%d (%d of %d turns reported)", s.InputTokens, s.OutputTokens, s.Reported, s.Turns)
			if s.Turns == 0 && s.Calls > 0 { // grouped by purpose: calls, not turns
				tokens = fmt.Sprintf("%d/%d (%d of %d calls reported)", s.InputTokens, s.OutputTokens, s.Reported, s.Calls)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t$%.4f\n", dash(s.Group), s.Turns, s.Answered, s.Denied, s.Failed,
				ms(s.LatencyP50Ms), ms(s.LatencyP95Ms), ms(s.ProviderMs), tokens, s.CostUSD)
		}
		return tw.Flush()
	}
	return fmt.Errorf("%w: format %q: want table, json or csv", auditlog.ErrBadFilter, format)
}

func ms(n int64) string { return (time.Duration(n) * time.Millisecond).String() }
