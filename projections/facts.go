package projections

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
)

// Facts is the read model of sender profiles: one row per sender and one
// per known fact.
type Facts struct{}

func (Facts) Name() string     { return "facts" }
func (Facts) Tables() []string { return []string{"senders", "facts"} }

func (Facts) Schema(d Dialect, t func(string) string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			sender      TEXT PRIMARY KEY,
			channel     TEXT NOT NULL,
			sender_id   TEXT NOT NULL,
			name        TEXT NOT NULL DEFAULT '',
			language    TEXT NOT NULL DEFAULT '',
			personality TEXT NOT NULL DEFAULT '',
			welcomed_at BIGINT,
			version     BIGINT NOT NULL
		)`, t("senders")),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			sender     TEXT NOT NULL,
			key        TEXT NOT NULL,
			value      TEXT NOT NULL,
			source     TEXT NOT NULL DEFAULT '',
			updated_at BIGINT NOT NULL,
			PRIMARY KEY (sender, key)
		)`, t("facts")),
	}
}

// SenderOf splits a sender stream id into channel and sender id.
func SenderOf(stream string) (sender, channel, id string, ok bool) {
	rest, found := strings.CutPrefix(stream, "sender-")
	if !found {
		return "", "", "", false
	}
	channel, id, ok = strings.Cut(rest, "-")
	return rest, channel, id, ok
}

func (f Facts) Apply(ctx context.Context, tx *Tx, e domain.Event) error {
	sender, channel, id, ok := SenderOf(e.StreamID)
	if !ok {
		return nil
	}
	switch e.Type {
	case "Welcomed", "FactRecorded", "FactRemoved", "FactsPurged", "LanguageSwitched", "PersonalitySet":
	default:
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	at := e.RecordedAt.UnixMicro()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (sender, channel, sender_id, version) VALUES ($1, $2, $3, $4)
		ON CONFLICT (sender) DO UPDATE SET version = excluded.version`, tx.T("senders")), sender, channel, id, e.Version); err != nil {
		return fmt.Errorf("upsert sender %s: %w", sender, err)
	}
	var stmt string
	var args []any
	switch ev := p.(type) {
	case domain.Welcomed:
		stmt = `UPDATE %s SET name = $2, welcomed_at = $3, language = CASE WHEN language = '' THEN $4 ELSE language END WHERE sender = $1`
		stmt, args = fmt.Sprintf(stmt, tx.T("senders")), []any{sender, ev.Name, at, ev.Language}
	case domain.LanguageSwitched:
		stmt, args = fmt.Sprintf(`UPDATE %s SET language = $2 WHERE sender = $1`, tx.T("senders")), []any{sender, ev.To}
	case domain.PersonalitySet:
		stmt, args = fmt.Sprintf(`UPDATE %s SET personality = $2 WHERE sender = $1`, tx.T("senders")), []any{sender, ev.Personality}
	case domain.FactRecorded:
		stmt = fmt.Sprintf(`INSERT INTO %s (sender, key, value, source, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (sender, key) DO UPDATE SET value = excluded.value, source = excluded.source, updated_at = excluded.updated_at`, tx.T("facts"))
		args = []any{sender, ev.Key, ev.Value, ev.Source, at}
	case domain.FactRemoved:
		stmt, args = fmt.Sprintf(`DELETE FROM %s WHERE sender = $1 AND key = $2`, tx.T("facts")), []any{sender, ev.Key}
	case domain.FactsPurged:
		stmt, args = fmt.Sprintf(`DELETE FROM %s WHERE sender = $1`, tx.T("facts")), []any{sender}
	}
	if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
		return fmt.Errorf("apply %s to %s: %w", e.Type, sender, err)
	}
	return nil
}
