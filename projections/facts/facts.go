// Package facts is the read model of senders and what they told omega to
// remember: the senders and facts tables.
package facts

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ReadModel is the read model of sender profiles: one row per sender and one
// per known fact.
type ReadModel struct{}

func (ReadModel) Name() string     { return "facts" }
func (ReadModel) Tables() []string { return []string{"senders", "facts"} }

func (ReadModel) Schema(d readmodel.Dialect, t func(string) string) []string {
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
func SenderOf(stream string) (snd, channel, id string, ok bool) {
	rest, found := strings.CutPrefix(stream, "sender-")
	if !found {
		return "", "", "", false
	}
	channel, id, ok = strings.Cut(rest, "-")
	return rest, channel, id, ok
}

func (f ReadModel) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	snd, channel, id, ok := SenderOf(e.StreamID)
	if !ok {
		return nil
	}
	switch e.Type {
	case sender.Welcomed{}.EventType(), sender.FactRecorded{}.EventType(), sender.FactRemoved{}.EventType(), sender.FactsPurged{}.EventType(), sender.LanguageSwitched{}.EventType(), sender.PersonalitySet{}.EventType():
	default:
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	at := e.RecordedAt.UnixMicro()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (sender, channel, sender_id, version) VALUES ($1, $2, $3, $4)
		ON CONFLICT (sender) DO UPDATE SET version = excluded.version`, tx.T("senders")), snd, channel, id, e.Version); err != nil {
		return fmt.Errorf("upsert sender %s: %w", snd, err)
	}
	var stmt string
	var args []any
	switch ev := p.(type) {
	case sender.Welcomed:
		stmt = `UPDATE %s SET name = $2, welcomed_at = $3, language = CASE WHEN language = '' THEN $4 ELSE language END WHERE sender = $1`
		stmt, args = fmt.Sprintf(stmt, tx.T("senders")), []any{snd, ev.Name, at, ev.Language}
	case sender.LanguageSwitched:
		stmt, args = fmt.Sprintf(`UPDATE %s SET language = $2 WHERE sender = $1`, tx.T("senders")), []any{snd, ev.To}
	case sender.PersonalitySet:
		stmt, args = fmt.Sprintf(`UPDATE %s SET personality = $2 WHERE sender = $1`, tx.T("senders")), []any{snd, ev.Personality}
	case sender.FactRecorded:
		stmt = fmt.Sprintf(`INSERT INTO %s (sender, key, value, source, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (sender, key) DO UPDATE SET value = excluded.value, source = excluded.source, updated_at = excluded.updated_at`, tx.T("facts"))
		args = []any{snd, ev.Key, ev.Value, ev.Source, at}
	case sender.FactRemoved:
		stmt, args = fmt.Sprintf(`DELETE FROM %s WHERE sender = $1 AND key = $2`, tx.T("facts")), []any{snd, ev.Key}
	case sender.FactsPurged:
		stmt, args = fmt.Sprintf(`DELETE FROM %s WHERE sender = $1`, tx.T("facts")), []any{snd}
	}
	if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
		return fmt.Errorf("apply %s to %s: %w", e.Type, snd, err)
	}
	return nil
}

// ApplyBatch applies evs with the effect of applying them one by one, in
// a few multi-row statements: the latest state of each sender row and of
// each fact is folded in memory and written once. Welcomed and FactsPurged
// depend on or clear rows wholesale; before one of them the fold so far is
// written and the event is applied on its own.
func (f ReadModel) ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error {
	b := newFactsBatch()
	for _, e := range evs {
		snd, channel, id, ok := SenderOf(e.StreamID)
		if !ok {
			continue
		}
		switch e.Type {
		case sender.Welcomed{}.EventType(), sender.FactsPurged{}.EventType():
			if err := b.flush(ctx, tx); err != nil {
				return err
			}
			if err := f.Apply(ctx, tx, e); err != nil {
				return fmt.Errorf("apply %s at position %d: %w", e.Type, e.Position, err)
			}
			continue
		case sender.FactRecorded{}.EventType(), sender.FactRemoved{}.EventType(), sender.LanguageSwitched{}.EventType(), sender.PersonalitySet{}.EventType():
		default:
			continue
		}
		p, err := tx.Decode(e)
		if err != nil {
			return fmt.Errorf("apply %s at position %d: %w", e.Type, e.Position, err)
		}
		b.add(snd, channel, id, e, p)
	}
	return b.flush(ctx, tx)
}

// factsBatch is the folded effect of a run of events.
type factsBatch struct {
	senders map[string]*senderChange
	order   []string // senders in first-seen order, for stable statements
	facts   map[factKey]factChange
	keys    []factKey
}

type senderChange struct {
	channel, id           string
	version               int64
	language, personality *string // nil: unchanged
}

type factKey struct{ sender, key string }

type factChange struct {
	removed       bool
	value, source string
	at            int64
}

func newFactsBatch() *factsBatch {
	return &factsBatch{senders: map[string]*senderChange{}, facts: map[factKey]factChange{}}
}

func (b *factsBatch) add(snd, channel, id string, e domain.Event, p domain.Payload) {
	s := b.senders[snd]
	if s == nil {
		s = &senderChange{channel: channel, id: id}
		b.senders[snd] = s
		b.order = append(b.order, snd)
	}
	s.version = e.Version
	switch ev := p.(type) {
	case sender.LanguageSwitched:
		s.language = &ev.To
	case sender.PersonalitySet:
		s.personality = &ev.Personality
	case sender.FactRecorded:
		b.setFact(factKey{snd, ev.Key}, factChange{value: ev.Value, source: ev.Source, at: e.RecordedAt.UnixMicro()})
	case sender.FactRemoved:
		b.setFact(factKey{snd, ev.Key}, factChange{removed: true})
	}
}

func (b *factsBatch) setFact(k factKey, c factChange) {
	if _, seen := b.facts[k]; !seen {
		b.keys = append(b.keys, k)
	}
	b.facts[k] = c
}

// Rows per statement: well under both databases' parameter limits.
const factsChunk = 500

func (b *factsBatch) flush(ctx context.Context, tx *readmodel.Tx) error {
	if err := b.flushSenders(ctx, tx); err != nil {
		return err
	}
	if err := b.flushFacts(ctx, tx); err != nil {
		return err
	}
	*b = *newFactsBatch()
	return nil
}

// flushSenders upserts the sender rows, grouped by which columns change
// (the statement's SET list differs).
func (b *factsBatch) flushSenders(ctx context.Context, tx *readmodel.Tx) error {
	type shape struct{ lang, pers bool }
	groups := map[shape][]string{}
	var shapes []shape
	for _, snd := range b.order {
		s := b.senders[snd]
		k := shape{s.language != nil, s.personality != nil}
		if _, ok := groups[k]; !ok {
			shapes = append(shapes, k)
		}
		groups[k] = append(groups[k], snd)
	}
	for _, k := range shapes {
		cols := []string{"sender", "channel", "sender_id", "version"}
		set := []string{"version = excluded.version"}
		if k.lang {
			cols, set = append(cols, "language"), append(set, "language = excluded.language")
		}
		if k.pers {
			cols, set = append(cols, "personality"), append(set, "personality = excluded.personality")
		}
		rows := groups[k]
		for len(rows) > 0 {
			chunk := rows[:min(factsChunk, len(rows))]
			rows = rows[len(chunk):]
			args := make([]any, 0, len(chunk)*len(cols))
			for _, snd := range chunk {
				s := b.senders[snd]
				args = append(args, snd, s.channel, s.id, s.version)
				if k.lang {
					args = append(args, *s.language)
				}
				if k.pers {
					args = append(args, *s.personality)
				}
			}
			stmt := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s ON CONFLICT (sender) DO UPDATE SET %s",
				tx.T("senders"), strings.Join(cols, ", "), placeholders(len(chunk), len(cols)), strings.Join(set, ", "))
			if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
				return fmt.Errorf("upsert %d sender(s): %w", len(chunk), err)
			}
		}
	}
	return nil
}

func (b *factsBatch) flushFacts(ctx context.Context, tx *readmodel.Tx) error {
	var upserts, removals []factKey
	for _, k := range b.keys {
		if b.facts[k].removed {
			removals = append(removals, k)
		} else {
			upserts = append(upserts, k)
		}
	}
	for len(removals) > 0 {
		chunk := removals[:min(factsChunk, len(removals))]
		removals = removals[len(chunk):]
		args := make([]any, 0, 2*len(chunk))
		for _, k := range chunk {
			args = append(args, k.sender, k.key)
		}
		stmt := fmt.Sprintf("DELETE FROM %s WHERE (sender, key) IN (VALUES %s)", tx.T("facts"), placeholders(len(chunk), 2))
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("remove %d fact(s): %w", len(chunk), err)
		}
	}
	for len(upserts) > 0 {
		chunk := upserts[:min(factsChunk, len(upserts))]
		upserts = upserts[len(chunk):]
		args := make([]any, 0, 5*len(chunk))
		for _, k := range chunk {
			c := b.facts[k]
			args = append(args, k.sender, k.key, c.value, c.source, c.at)
		}
		stmt := fmt.Sprintf(`INSERT INTO %s (sender, key, value, source, updated_at) VALUES %s
			ON CONFLICT (sender, key) DO UPDATE SET value = excluded.value, source = excluded.source, updated_at = excluded.updated_at`,
			tx.T("facts"), placeholders(len(chunk), 5))
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("record %d fact(s): %w", len(chunk), err)
		}
	}
	return nil
}

// placeholders returns "($1, $2), ($3, $4)" for rows=2, cols=2.
func placeholders(rows, cols int) string {
	var sb strings.Builder
	n := 1
	for r := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for c := range cols {
			if c > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "$%d", n)
			n++
		}
		sb.WriteByte(')')
	}
	return sb.String()
}
