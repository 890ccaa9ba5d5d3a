package projections

import (
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// UsageColumns are what a turn's provider calls took and cost, summed over
// every call (classification, plan steps, the reply, failed attempts'
// time). usage_reported is 1 when any call reported usage: with 0 the token
// counts are unknown, not zero.
const UsageColumns = `input_tokens       BIGINT NOT NULL DEFAULT 0,
			output_tokens      BIGINT NOT NULL DEFAULT 0,
			cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
			cache_write_tokens BIGINT NOT NULL DEFAULT 0,
			cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
			usage_reported     INTEGER NOT NULL DEFAULT 0,
			calls              BIGINT NOT NULL DEFAULT 0`

// AuditColumns is the audit row, in insert order: the order in which
// projections/auditlog reads it.
const AuditColumns = `turn_id, at, sender, channel, sender_id, project, conversation_id, input, output, provider, model,
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
		)`, t("audit"), UsageColumns),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (at, turn_id)`, t("audit_at"), t("audit")),
	}
	for _, col := range []string{"sender", "channel", "status", "model", "project", "acked"} {
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (%s, at, turn_id)`, t("audit_by_"+col), t("audit"), col))
	}
	return stmts
}

// auditInsert copies a completed turn ($1, completed at $2) into the audit.
func auditInsert(tx *readmodel.Tx) string { return auditInsertFrom(tx, tx.T("turns")) }

// auditInsertFrom is auditInsert reading the turn from rows (the turns
// table, or a CTE of the same shape).
func auditInsertFrom(tx *readmodel.Tx, rows string) string {
	return auditInsertSQL(tx.T, rows, "$2", "WHERE turn_id = $1")
}

// auditInsertSQL copies the turns of rows that where selects into the
// audit, each completed at the expression at.
func auditInsertSQL(t func(string) string, rows, at, where string) string {
	return fmt.Sprintf(`INSERT INTO %[1]s (%[2]s)
		SELECT turn_id, %[4]s, sender, channel, sender_id, project, conversation_id, input, output, provider, model,
			duration_ms, prompt_bytes, reply_bytes, status, acked, received_at, (%[4]s - received_at) / 1000,
			input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, calls
		FROM %[3]s %[5]s`, t("audit"), AuditColumns, rows, at, where)
}

// callUsageOf is the provider call an event records, if any.
func callUsageOf(p domain.Payload) (usage.CallUsage, bool) {
	switch ev := p.(type) {
	case turn.ProviderReplied:
		return ev.Usage(), true
	case turn.ProviderFailed:
		// A failed call took provider time too.
		return usage.CallUsage{DurationMs: ev.DurationMs}, true
	case turn.PlanStepCompleted:
		if ev.Usage != nil {
			return *ev.Usage, true
		}
	case turn.RouteDecided:
		if ev.Usage != nil {
			return *ev.Usage, true
		}
	}
	return usage.CallUsage{}, false
}

// addUsage adds one provider call's usage to the turn.
// turnSet is one more column a usage update sets on the turn.
type turnSet struct {
	column string
	value  any
}

func addUsage(exec func(string, ...any) error, tx *readmodel.Tx, id string, u usage.CallUsage, also ...turnSet) error {
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
