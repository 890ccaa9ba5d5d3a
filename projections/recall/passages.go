package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// passage is one indexed text.
type passage struct {
	key, chat, conv, turnID, project, kind string
	at                                     int64
	body                                   string
}

// passageOf is the turn's message as a passage of its conversation; ok
// is false for a turn that belongs to none (a command, or an event
// before its message).
func passageOf(ctx context.Context, tx *readmodel.Tx, id string) (passage, bool, error) {
	p := passage{turnID: id}
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT chat, input, conversation_id, project FROM %s WHERE turn_id = $1`, tx.T("recall_turns")), id).
		Scan(&p.chat, &p.body, &p.conv, &p.project)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	return p, p.conv != "", nil
}

// contextBuilt puts the turn in its conversation and indexes its
// message, as the conversation's history shows it.
func contextBuilt(ctx context.Context, tx *readmodel.Tx, id string, ev turn.ContextBuilt, at int64) error {
	if ev.ConversationID == "" {
		return nil
	}
	p := passage{turnID: id}
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`UPDATE %s SET conversation_id = $2, project = $3 WHERE turn_id = $1
		RETURNING chat, input, conversation_id, project`, tx.T("recall_turns")), id, ev.ConversationID, ev.Project).
		Scan(&p.chat, &p.body, &p.conv, &p.project)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && strings.TrimSpace(p.body) == "") {
		return nil // an event before its message, or a message without text
	}
	if err != nil {
		return err
	}
	p.key, p.kind, p.at = id+"/"+KindUser, KindUser, at
	return upsert(ctx, tx, p)
}

// merged adds a burst's later messages to the turn's message, and to its
// passage once indexed.
func merged(ctx context.Context, tx *readmodel.Tx, id string, ev turn.MessagesMerged, at int64) error {
	if len(ev.Texts) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET input = input || $2 WHERE turn_id = $1`, tx.T("recall_turns")),
		id, "\n"+strings.Join(ev.Texts, "\n")); err != nil {
		return err
	}
	p, ok, err := passageOf(ctx, tx, id)
	if err != nil || !ok {
		return err
	}
	p.key, p.kind, p.at = id+"/"+KindUser, KindUser, at
	return upsert(ctx, tx, p)
}

// upsert indexes a passage, replacing its text if it is indexed already
// (its time stays the first one).
func upsert(ctx context.Context, tx *readmodel.Tx, p passage) error {
	if tx.Dialect == readmodel.Postgres {
		// One statement, one round trip: the passage and its index entry.
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`WITH passage AS (
				INSERT INTO %s (key, chat, conversation_id, turn_id, project, kind, at, body)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO UPDATE SET body = excluded.body)
			INSERT INTO %s (key, chat, conversation_id, tsv, owned)
			VALUES ($1, $2, $3, to_tsvector('simple', $9), to_tsvector('simple', $10))
			ON CONFLICT (key) DO UPDATE SET tsv = excluded.tsv, owned = excluded.owned`, tx.T("recall_passages"), tx.T("recall_fts")),
			p.key, p.chat, p.conv, p.turnID, p.project, p.kind, p.at, p.body, stemText(p.body), ownedText(p.chat, p.body))
		return err
	}
	var rowid int64
	if err := tx.QueryRowContext(ctx, fmt.Sprintf(`INSERT INTO %s (key, chat, conversation_id, turn_id, project, kind, at, body)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO UPDATE SET body = excluded.body RETURNING id`, tx.T("recall_passages")),
		p.key, p.chat, p.conv, p.turnID, p.project, p.kind, p.at, p.body).Scan(&rowid); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE rowid = $1`, tx.T("recall_fts")), rowid); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (rowid, stems, owned, conv) VALUES ($1, $2, $3, $4)`, tx.T("recall_fts")),
		rowid, stemText(p.body), ownedText(p.chat, p.body), convToken(p.conv))
	return err
}
