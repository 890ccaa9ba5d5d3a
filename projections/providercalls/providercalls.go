// Package providercalls is the read model of every provider call by
// purpose; projections/auditlog sums it (stats by purpose).
package providercalls

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ReadModel is the read model of every provider call, whatever it was
// for (usage.ProviderCallOf): a turn's reply, a plan step, a
// classification, a heartbeat check-in, a summary, a fact extraction, a
// self-heal follow-up. The audit table counts a turn's calls; this one
// counts all of them, by purpose.
type ReadModel struct{}

func (ReadModel) Name() string { return "provider_calls" }

// Lane: the budget reads this model's own checkpoint and the log after it,
// so the turns read model need not wait for the ledger.
func (ReadModel) Lane() string { return "usage" }

// Version 2 adds who each call was for (the sender key of the event's
// metadata, "" for omega's own work) and the model that answered.
func (ReadModel) Version() int     { return 2 }
func (ReadModel) Tables() []string { return []string{"provider_calls"} }
func (ReadModel) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			position BIGINT PRIMARY KEY,
			at       BIGINT NOT NULL,
			purpose  TEXT NOT NULL,
			sender   TEXT NOT NULL DEFAULT '',
			model    TEXT NOT NULL DEFAULT '',
			failed   INTEGER NOT NULL,
			duration_ms BIGINT NOT NULL,
			%s
		)`, t("provider_calls"), projections.UsageColumns),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (at)`, t("provider_calls_at"), t("provider_calls")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (sender, at)`, t("provider_calls_sender_at"), t("provider_calls")),
	}
}

func (ReadModel) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	c, ok, err := callOf(tx, e)
	if err != nil || !ok {
		return err
	}
	u := c.Usage
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (position, at, purpose, sender, model, failed, duration_ms, input_tokens, output_tokens,
		cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, calls)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1) ON CONFLICT (position) DO NOTHING`, tx.T("provider_calls")),
		e.Position, e.RecordedAt.UnixMicro(), c.Purpose, SenderOf(e), u.Model, flag(c.Failed), u.DurationMs, u.InputTokens, u.OutputTokens,
		u.CacheReadTokens, u.CacheWriteTokens, u.CostUSD, flag(u.UsageReported)); err != nil {
		return fmt.Errorf("provider calls: apply %s at %d: %w", e.Type, e.Position, err)
	}
	return nil
}

// callOf is the provider call e records; false for any other event.
func callOf(tx *readmodel.Tx, e domain.Event) (usage.ProviderCall, bool, error) {
	if !events.IsProviderCall(e.Type) {
		return usage.ProviderCall{}, false, nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return usage.ProviderCall{}, false, err
	}
	c, ok := usage.ProviderCallOf(p)
	return c, ok, nil
}

// ApplyBatch applies evs as Apply would one by one: on PostgreSQL in one
// statement (a read model transaction holds the log's visibility horizon
// from its first write to its commit, and readers awaiting their own
// commits wait for it), on SQLite one by one.
func (m ReadModel) ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error {
	if tx.Dialect != readmodel.Postgres {
		for _, e := range evs {
			if err := m.Apply(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	}
	var rows []map[string]any
	for _, e := range evs {
		c, ok, err := callOf(tx, e)
		if err != nil {
			return fmt.Errorf("provider calls: apply %s at %d: %w", e.Type, e.Position, err)
		}
		if !ok {
			continue
		}
		u := c.Usage
		rows = append(rows, map[string]any{"position": e.Position, "at": e.RecordedAt.UnixMicro(), "purpose": readmodel.Storable(c.Purpose),
			"sender": readmodel.Storable(SenderOf(e)), "model": readmodel.Storable(u.Model), "failed": flag(c.Failed), "duration_ms": u.DurationMs,
			"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "cache_read_tokens": u.CacheReadTokens,
			"cache_write_tokens": u.CacheWriteTokens, "cost_usd": u.CostUSD, "usage_reported": flag(u.UsageReported)})
	}
	if len(rows) == 0 {
		return nil
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	// Sent unprepared: planned for the table as it is.
	if _, err := tx.Tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (position, at, purpose, sender, model, failed, duration_ms, input_tokens, output_tokens,
		cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, calls)
		SELECT position, at, purpose, sender, model, failed, duration_ms, input_tokens, output_tokens,
			cache_read_tokens, cache_write_tokens, cost_usd, usage_reported, 1
		FROM json_to_recordset($1::json) AS v(position bigint, at bigint, purpose text, sender text, model text, failed integer,
			duration_ms bigint, input_tokens bigint, output_tokens bigint, cache_read_tokens bigint, cache_write_tokens bigint,
			cost_usd double precision, usage_reported integer)
		ON CONFLICT (position) DO NOTHING`, tx.T("provider_calls")), string(data)); err != nil {
		return fmt.Errorf("provider calls: apply a batch of %d calls: %w", len(rows), err)
	}
	return nil
}

// SenderOf is the sender key a call event was for, from its metadata;
// "" for omega's own work (a heartbeat, a self-heal follow-up).
func SenderOf(e domain.Event) string {
	if e.Metadata.Channel == "" || e.Metadata.Sender == "" {
		return ""
	}
	return sender.SenderKey(e.Metadata.Channel, e.Metadata.Sender)
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
