// Package auditlog answers the operator's questions about what the agent
// did: completed turns page by page (Query, Turn), their sums (Stats) and
// what the read models know of one sender (Sender). It only reads: the
// audit table is the turns read model's (projections), provider_calls its
// own read model's. The HTTP and CLI faces of these queries (filter
// parsing, CSV and JSON formats) are api/audit.
package auditlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/projections"
)

// Row is one completed turn as the audit records it. Times are UTC.
type Row struct {
	TurnID         string    `json:"turn_id"`
	At             time.Time `json:"at"`
	ReceivedAt     time.Time `json:"received_at"`
	Sender         string    `json:"sender"` // channel:id
	Channel        string    `json:"channel"`
	SenderID       string    `json:"sender_id"`
	Project        string    `json:"project,omitempty"`
	ConversationID string    `json:"conversation_id,omitempty"`
	Status         string    `json:"status"`  // the audit's word (Status)
	Outcome        string    `json:"outcome"` // the turn's own (TurnCompleted.Status)
	Acknowledged   bool      `json:"acknowledged,omitempty"`
	Input          string    `json:"input"`
	Output         string    `json:"output"`
	Provider       string    `json:"provider,omitempty"`
	Model          string    `json:"model,omitempty"`
	LatencyMs      int64     `json:"latency_ms"`
	ProviderMs     int64     `json:"provider_ms"`
	Calls          int64     `json:"calls"`
	PromptBytes    int64     `json:"prompt_bytes"`
	ReplyBytes     int64     `json:"reply_bytes"`
	// Tokens and cost are nil when no provider call reported usage:
	// unknown, not zero.
	InputTokens      *int64   `json:"input_tokens,omitempty"`
	OutputTokens     *int64   `json:"output_tokens,omitempty"`
	CacheReadTokens  *int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens *int64   `json:"cache_write_tokens,omitempty"`
	CostUSD          *float64 `json:"cost_usd,omitempty"`
}

// Filter selects audit rows. Zero fields select everything.
type Filter struct {
	Sender  string // read-model sender key (sender.SenderKey)
	Channel string
	Since   time.Time // inclusive
	Until   time.Time // exclusive
	Status  string    // one of Statuses
	Model   string
	Project string
	Grep    string // case-insensitive substring of input or output
	Limit   int    // page size; 0 means DefaultLimit
	After   string // cursor from the previous page's Next
}

// Audit page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// auditWords names each turn outcome (TurnCompleted.Status) the way the
// audit shows and filters it, in the operator's words: a command's answer
// is an answer, an undelivered reply a failure.
var auditWords = map[string]string{
	"ok":          "answered",
	"command":     "answered",
	"denied":      "denied",
	"error":       "failed",
	"undelivered": "failed",
	"suppressed":  "suppressed",
	"merged":      "merged", // coalesced into the turn after it
}

// Status is the audit's word for a turn outcome; an unknown one is
// shown as it is.
func Status(outcome string) string {
	if w, ok := auditWords[outcome]; ok {
		return w
	}
	return outcome
}

// auditStatuses maps the operator's words to what the audit records: a
// turn's outcomes, or that it was acknowledged as queued.
var auditStatuses = func() map[string]string {
	outcomes := map[string][]string{}
	for outcome, word := range auditWords {
		outcomes[word] = append(outcomes[word], "'"+outcome+"'")
	}
	out := map[string]string{"acknowledged": "acked = 1"}
	for word, list := range outcomes {
		slices.Sort(list)
		out[word] = "status IN (" + strings.Join(list, ", ") + ")"
	}
	return out
}()

// Statuses are the values Filter.Status accepts.
func Statuses() []string {
	out := make([]string, 0, len(auditStatuses))
	for k := range auditStatuses {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ErrBadFilter is wrapped by every error about a filter's values.
var ErrBadFilter = errors.New("bad audit filter")

// Queries answers audit queries.
type Queries struct {
	db *sql.DB
}

// New returns the audit queries over db.
func New(db *sql.DB) (*Queries, error) {
	if db == nil {
		return nil, errors.New("auditlog: nil database")
	}
	return &Queries{db: db}, nil
}

// Page is one page of rows, newest first; Next is the cursor of the
// following page, "" on the last.
type Page struct {
	Rows []Row  `json:"rows"`
	Next string `json:"next,omitempty"`
}

// where builds the filter's condition and arguments.
func (f Filter) where() (string, []any, error) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	for _, eq := range []struct{ col, v string }{{"sender", f.Sender}, {"channel", f.Channel}, {"model", f.Model}, {"project", f.Project}} {
		if eq.v != "" {
			add(eq.col+" = ?", eq.v)
		}
	}
	if !f.Since.IsZero() {
		add("at >= ?", f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		add("at < ?", f.Until.UnixMicro())
	}
	if f.Status != "" {
		cond, ok := auditStatuses[f.Status]
		if !ok {
			return "", nil, fmt.Errorf("%w: status %q: want one of %s", ErrBadFilter, f.Status, strings.Join(Statuses(), ", "))
		}
		conds = append(conds, cond)
	}
	if f.Grep != "" {
		pat := "%" + likeEscaper.Replace(strings.ToLower(f.Grep)) + "%"
		args = append(args, pat)
		n := "$" + strconv.Itoa(len(args))
		conds = append(conds, fmt.Sprintf(`(lower(input) LIKE %s ESCAPE '\' OR lower(output) LIKE %s ESCAPE '\')`, n, n))
	}
	if f.After != "" {
		at, id, err := parseCursor(f.After)
		if err != nil {
			return "", nil, err
		}
		args = append(args, at, id)
		conds = append(conds, fmt.Sprintf("(at, turn_id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	if len(conds) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func cursor(r Row) string { return strconv.FormatInt(r.At.UnixMicro(), 10) + ":" + r.TurnID }

func parseCursor(c string) (int64, string, error) {
	at, id, ok := strings.Cut(c, ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%w: cursor %q is not one a page returned", ErrBadFilter, c)
	}
	return n, id, nil
}

// Query returns one page of the rows f selects, newest first.
func (a *Queries) Query(ctx context.Context, f Filter) (Page, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		return Page{}, fmt.Errorf("%w: limit %d above %d", ErrBadFilter, limit, MaxLimit)
	}
	where, args, err := f.where()
	if err != nil {
		return Page{}, err
	}
	q := fmt.Sprintf(`SELECT %s FROM audit%s ORDER BY at DESC, turn_id DESC LIMIT %d`, projections.AuditColumns, where, limit+1)
	rows, err := a.db.QueryContext(ctx, q, args...)
	if err != nil {
		return Page{}, fmt.Errorf("query audit: %w", err)
	}
	defer rows.Close()
	var page Page
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return Page{}, err
		}
		page.Rows = append(page.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("read audit: %w", err)
	}
	if len(page.Rows) > limit {
		page.Rows = page.Rows[:limit]
		page.Next = cursor(page.Rows[limit-1])
	}
	return page, nil
}

// Turn returns the audit row of one turn, or false when the turn has not
// completed (or does not exist).
func (a *Queries) Turn(ctx context.Context, turnID string) (Row, bool, error) {
	row := a.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %s FROM audit WHERE turn_id = $1`, projections.AuditColumns), turnID)
	r, err := scanAudit(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Row{}, false, nil
	}
	return r, err == nil, err
}

// TurnsWithPrefix lists up to limit completed turns whose id starts with
// prefix (turn ids are hex digits and dashes, so the prefix holds no
// LIKE wildcard; anything else matches nothing).
func (a *Queries) TurnsWithPrefix(ctx context.Context, prefix string, limit int) ([]string, error) {
	prefix = strings.ToLower(prefix)
	if prefix == "" || strings.Trim(prefix, "0123456789abcdef-") != "" {
		return nil, nil
	}
	rows, err := a.db.QueryContext(ctx, fmt.Sprintf(`SELECT turn_id FROM audit WHERE turn_id LIKE $1 ORDER BY turn_id LIMIT %d`, limit), prefix+"%")
	if err != nil {
		return nil, fmt.Errorf("look up turns %s: %w", prefix, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanAudit(s scanner) (Row, error) {
	var r Row
	var at, received int64
	var acked, reported int
	var in, out, cr, cw int64
	var cost float64
	err := s.Scan(&r.TurnID, &at, &r.Sender, &r.Channel, &r.SenderID, &r.Project, &r.ConversationID, &r.Input, &r.Output,
		&r.Provider, &r.Model, &r.ProviderMs, &r.PromptBytes, &r.ReplyBytes, &r.Outcome, &acked, &received, &r.LatencyMs,
		&in, &out, &cr, &cw, &cost, &reported, &r.Calls)
	if err != nil {
		return Row{}, fmt.Errorf("scan audit row: %w", err)
	}
	r.At, r.ReceivedAt = time.UnixMicro(at).UTC(), time.UnixMicro(received).UTC()
	r.Status = Status(r.Outcome)
	r.Sender = sender.SenderLabel(r.Sender) // channel:id, as the filter takes it
	r.Acknowledged = acked == 1
	if reported == 1 {
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens = &in, &out, &cr, &cw
		if cost > 0 {
			r.CostUSD = &cost // only claude-code reports a cost
		}
	}
	return r, nil
}
