package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// usageColumns are what a turn's provider calls took and cost, summed over
// every call (classification, plan steps, the reply, failed attempts'
// time). usage_reported is 1 when any call reported usage: with 0 the token
// counts are unknown, not zero.
const usageColumns = `input_tokens       BIGINT NOT NULL DEFAULT 0,
			output_tokens      BIGINT NOT NULL DEFAULT 0,
			cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
			cache_write_tokens BIGINT NOT NULL DEFAULT 0,
			cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
			usage_reported     INTEGER NOT NULL DEFAULT 0,
			calls              BIGINT NOT NULL DEFAULT 0`

// auditColumns is the audit row, in insert order.
const auditColumns = `turn_id, at, sender, channel, sender_id, project, conversation_id, input, output, provider, model,
	duration_ms, prompt_bytes, reply_bytes, status, acked, received_at, latency_ms,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, calls`

// auditSchema is the audit table: one row per completed turn, newest first
// by (at, turn_id), the keyset every page seeks by. Each filter has an
// index led by its column and ending in the keyset, so a filtered page
// reads only its rows.
func auditSchema(t func(string) string) []string {
	stmts := []string{fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			turn_id         TEXT PRIMARY KEY,
			at              BIGINT NOT NULL,
			sender          TEXT NOT NULL,
			channel         TEXT NOT NULL,
			sender_id       TEXT NOT NULL,
			project         TEXT NOT NULL,
			conversation_id TEXT NOT NULL,
			input           TEXT NOT NULL,
			output          TEXT NOT NULL,
			provider        TEXT NOT NULL,
			model           TEXT NOT NULL,
			duration_ms     BIGINT NOT NULL,
			prompt_bytes    BIGINT NOT NULL,
			reply_bytes     BIGINT NOT NULL,
			status          TEXT NOT NULL,
			acked           INTEGER NOT NULL,
			received_at     BIGINT NOT NULL,
			latency_ms      BIGINT NOT NULL,
			%s
		)`, t("audit"), usageColumns),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (at, turn_id)`, t("audit_at"), t("audit")),
	}
	for _, col := range []string{"sender", "channel", "status", "model", "project", "acked"} {
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (%s, at, turn_id)`, t("audit_by_"+col), t("audit"), col))
	}
	return stmts
}

// auditInsert copies a completed turn ($1, completed at $2) into the audit.
func auditInsert(tx *Tx) string { return auditInsertFrom(tx, tx.T("turns")) }

// auditInsertFrom is auditInsert reading the turn from rows (the turns
// table, or a CTE of the same shape).
func auditInsertFrom(tx *Tx, rows string) string {
	return fmt.Sprintf(`INSERT INTO %s (%s)
		SELECT turn_id, $2, sender, channel, sender_id, project, conversation_id, input, output, provider, model,
			duration_ms, prompt_bytes, reply_bytes, status, acked, received_at, ($2 - received_at) / 1000,
			input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, calls
		FROM %s WHERE turn_id = $1`, tx.T("audit"), auditColumns, rows)
}

// callUsageOf is the provider call an event records, if any.
func callUsageOf(p domain.Payload) (domain.CallUsage, bool) {
	switch ev := p.(type) {
	case domain.ProviderReplied:
		return ev.Usage(), true
	case domain.ProviderFailed:
		// A failed call took provider time too.
		return domain.CallUsage{DurationMs: ev.DurationMs}, true
	case domain.PlanStepCompleted:
		if ev.Usage != nil {
			return *ev.Usage, true
		}
	case domain.RouteDecided:
		if ev.Usage != nil {
			return *ev.Usage, true
		}
	}
	return domain.CallUsage{}, false
}

// addUsage adds one provider call's usage to the turn.
// turnSet is one more column a usage update sets on the turn.
type turnSet struct {
	column string
	value  any
}

func addUsage(exec func(string, ...any) error, tx *Tx, id string, u domain.CallUsage, also ...turnSet) error {
	reported := 0
	if u.UsageReported {
		reported = 1
	}
	args := []any{id, u.DurationMs, u.PromptBytes, u.ReplyBytes, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, reported}
	var more strings.Builder
	for _, a := range also {
		args = append(args, a.value)
		fmt.Fprintf(&more, ", %s = $%d", a.column, len(args))
	}
	return exec(fmt.Sprintf(`UPDATE %s SET duration_ms = duration_ms + $2, prompt_bytes = prompt_bytes + $3, reply_bytes = reply_bytes + $4,
		input_tokens = input_tokens + $5, output_tokens = output_tokens + $6, cache_read_tokens = cache_read_tokens + $7,
		cache_write_tokens = cache_write_tokens + $8, cost_usd = cost_usd + $9,
		usage_reported = CASE WHEN $10 = 1 THEN 1 ELSE usage_reported END, calls = calls + 1%s WHERE turn_id = $1`, tx.T("turns"), more.String()),
		args...)
}

// AuditRow is one completed turn as the audit records it. Times are UTC.
type AuditRow struct {
	TurnID         string    `json:"turn_id"`
	At             time.Time `json:"at"`
	ReceivedAt     time.Time `json:"received_at"`
	Sender         string    `json:"sender"` // channel:id
	Channel        string    `json:"channel"`
	SenderID       string    `json:"sender_id"`
	Project        string    `json:"project,omitempty"`
	ConversationID string    `json:"conversation_id,omitempty"`
	Status         string    `json:"status"`  // the audit's word (AuditStatus)
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

// AuditFilter selects audit rows. Zero fields select everything.
type AuditFilter struct {
	Sender  string // read-model sender key (domain.SenderKey)
	Channel string
	Since   time.Time // inclusive
	Until   time.Time // exclusive
	Status  string    // one of AuditStatuses
	Model   string
	Project string
	Grep    string // case-insensitive substring of input or output
	Limit   int    // page size; 0 means DefaultAuditLimit
	After   string // cursor from the previous page's Next
}

// Audit page sizes.
const (
	DefaultAuditLimit = 50
	MaxAuditLimit     = 1000
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

// AuditStatus is the audit's word for a turn outcome; an unknown one is
// shown as it is.
func AuditStatus(outcome string) string {
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

// AuditStatuses are the values AuditFilter.Status accepts.
func AuditStatuses() []string {
	out := make([]string, 0, len(auditStatuses))
	for k := range auditStatuses {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ErrBadFilter is wrapped by every error about a filter's values.
var ErrBadFilter = errors.New("bad audit filter")

// AuditLog answers audit queries.
type AuditLog struct {
	db *sql.DB
}

// NewAuditLog returns the audit queries over db.
func NewAuditLog(db *sql.DB) (*AuditLog, error) {
	if db == nil {
		return nil, errors.New("audit log: nil database")
	}
	return &AuditLog{db: db}, nil
}

// AuditPage is one page of rows, newest first; Next is the cursor of the
// following page, "" on the last.
type AuditPage struct {
	Rows []AuditRow `json:"rows"`
	Next string     `json:"next,omitempty"`
}

// where builds the filter's condition and arguments.
func (f AuditFilter) where() (string, []any, error) {
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
			return "", nil, fmt.Errorf("%w: status %q: want one of %s", ErrBadFilter, f.Status, strings.Join(AuditStatuses(), ", "))
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

func cursor(r AuditRow) string { return strconv.FormatInt(r.At.UnixMicro(), 10) + ":" + r.TurnID }

func parseCursor(c string) (int64, string, error) {
	at, id, ok := strings.Cut(c, ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", fmt.Errorf("%w: cursor %q is not one a page returned", ErrBadFilter, c)
	}
	return n, id, nil
}

// Query returns one page of the rows f selects, newest first.
func (a *AuditLog) Query(ctx context.Context, f AuditFilter) (AuditPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultAuditLimit
	}
	if limit > MaxAuditLimit {
		return AuditPage{}, fmt.Errorf("%w: limit %d above %d", ErrBadFilter, limit, MaxAuditLimit)
	}
	where, args, err := f.where()
	if err != nil {
		return AuditPage{}, err
	}
	q := fmt.Sprintf(`SELECT %s FROM audit%s ORDER BY at DESC, turn_id DESC LIMIT %d`, auditColumns, where, limit+1)
	rows, err := a.db.QueryContext(ctx, q, args...)
	if err != nil {
		return AuditPage{}, fmt.Errorf("query audit: %w", err)
	}
	defer rows.Close()
	var page AuditPage
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return AuditPage{}, err
		}
		page.Rows = append(page.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return AuditPage{}, fmt.Errorf("read audit: %w", err)
	}
	if len(page.Rows) > limit {
		page.Rows = page.Rows[:limit]
		page.Next = cursor(page.Rows[limit-1])
	}
	return page, nil
}

// Turn returns the audit row of one turn, or false when the turn has not
// completed (or does not exist).
func (a *AuditLog) Turn(ctx context.Context, turnID string) (AuditRow, bool, error) {
	row := a.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %s FROM audit WHERE turn_id = $1`, auditColumns), turnID)
	r, err := scanAudit(row)
	if errors.Is(err, sql.ErrNoRows) {
		return AuditRow{}, false, nil
	}
	return r, err == nil, err
}

// TurnsWithPrefix lists up to limit completed turns whose id starts with
// prefix (turn ids are hex digits and dashes, so the prefix holds no
// LIKE wildcard; anything else matches nothing).
func (a *AuditLog) TurnsWithPrefix(ctx context.Context, prefix string, limit int) ([]string, error) {
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

func scanAudit(s scanner) (AuditRow, error) {
	var r AuditRow
	var at, received int64
	var acked, reported int
	var in, out, cr, cw int64
	var cost float64
	err := s.Scan(&r.TurnID, &at, &r.Sender, &r.Channel, &r.SenderID, &r.Project, &r.ConversationID, &r.Input, &r.Output,
		&r.Provider, &r.Model, &r.ProviderMs, &r.PromptBytes, &r.ReplyBytes, &r.Outcome, &acked, &received, &r.LatencyMs,
		&in, &out, &cr, &cw, &cost, &reported, &r.Calls)
	if err != nil {
		return AuditRow{}, fmt.Errorf("scan audit row: %w", err)
	}
	r.At, r.ReceivedAt = time.UnixMicro(at).UTC(), time.UnixMicro(received).UTC()
	r.Status = AuditStatus(r.Outcome)
	r.Sender = domain.SenderLabel(r.Sender) // channel:id, as the filter takes it
	r.Acknowledged = acked == 1
	if reported == 1 {
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens = &in, &out, &cr, &cw
		if cost > 0 {
			r.CostUSD = &cost // only claude-code reports a cost
		}
	}
	return r, nil
}
