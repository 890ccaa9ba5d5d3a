// Package recall is the full-text index of every conversation: each
// message (the person's and omega's reply) and each conversation's
// summary, searchable by words. On SQLite it is an FTS5 index, on
// PostgreSQL a tsvector column with a GIN index. The read model and its
// queries live together: this package is the only reader of its tables.
package recall

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Kinds of passage.
const (
	KindUser      = "user"
	KindAssistant = "assistant"
	KindSummary   = "summary"
)

// ReadModel indexes the passages. A passage belongs to the chat its
// conversation is kept under (the person's own key in a private chat, the
// group's in a group), so a search for one chat never sees another's.
type ReadModel struct{}

func (ReadModel) Name() string { return "recall" }

// Lane: searches read older conversations, so a batch of lag is harmless,
// and the turns read model need not wait for the search index.
func (ReadModel) Lane() string { return "recall" }

// Version 1 is the first shape.
func (ReadModel) Version() int { return 1 }

// Tables: recall_turns follows a turn's message until its context names
// the conversation; recall_passages holds the passages; recall_fts is
// their index: on SQLite an FTS5 table (rowid = the passage's id), on
// PostgreSQL a tsvector per passage with a GIN index.
func (ReadModel) Tables() []string { return []string{"recall_turns", "recall_passages", "recall_fts"} }

// Schema creates the tables. PostgreSQL's text search configuration is
// 'simple' (lower-cased words, no stemming, no stop words) rather than a
// language's: one person writes in several languages, often within one
// conversation, and a stemmer for the wrong language mangles words, while
// a configuration per message would have to be guessed for the message
// and the query alike. 'simple' indexes every word as written, as
// SQLite's unicode61 tokenizer does, so both backends find the same
// passages; inflections meet by their stems (see stem).
func (ReadModel) Schema(d readmodel.Dialect, t func(string) string) []string {
	turns := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
		turn_id         TEXT PRIMARY KEY,
		chat            TEXT NOT NULL,
		input           TEXT NOT NULL,
		conversation_id TEXT NOT NULL DEFAULT '',
		project         TEXT NOT NULL DEFAULT ''
	)`, t("recall_turns"))
	if d == readmodel.Postgres {
		return []string{turns,
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
				key             TEXT PRIMARY KEY,
				chat            TEXT NOT NULL,
				conversation_id TEXT NOT NULL,
				turn_id         TEXT NOT NULL,
				project         TEXT NOT NULL,
				kind            TEXT NOT NULL,
				at              BIGINT NOT NULL,
				body            TEXT NOT NULL
			)`, t("recall_passages")),
			// The index: a passage's stems (tsv, for a search of
			// everyone's) and its stems as its chat's own (owned, see
			// ownedText), so a search ranks without reading the texts.
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
				key             TEXT PRIMARY KEY,
				chat            TEXT NOT NULL,
				conversation_id TEXT NOT NULL,
				tsv             tsvector NOT NULL,
				owned           tsvector NOT NULL
			)`, t("recall_fts")),
			fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s USING GIN (tsv)`, t("recall_fts_tsv"), t("recall_fts")),
			fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s USING GIN (owned)`, t("recall_fts_owned"), t("recall_fts")),
		}
	}
	return []string{turns,
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id              INTEGER PRIMARY KEY,
			key             TEXT NOT NULL UNIQUE,
			chat            TEXT NOT NULL,
			conversation_id TEXT NOT NULL,
			turn_id         TEXT NOT NULL,
			project         TEXT NOT NULL,
			kind            TEXT NOT NULL,
			at              BIGINT NOT NULL,
			body            TEXT NOT NULL
		)`, t("recall_passages")),
		// stems are the passage's, for a search of everyone's
		// passages; owned the same as the chat's own (see ownedText),
		// for a chat's; conv names its conversation (convToken). The
		// text itself is in recall_passages.
		fmt.Sprintf(`CREATE VIRTUAL TABLE IF NOT EXISTS %s USING fts5(stems, owned, conv,
			tokenize = 'unicode61 remove_diacritics 0')`, t("recall_fts")),
	}
}

// Apply indexes a turn's message once its context names the
// conversation, its reply when it is ready, and a closed conversation's
// summary.
func (m ReadModel) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	if !applies(e) {
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	if err := m.apply(ctx, tx, e, p); err != nil {
		return fmt.Errorf("recall: apply %s of %s: %w", e.Type, e.StreamID, err)
	}
	return nil
}

// applies reports whether the index applies e: a turn's message, merge,
// context and reply, and a summary's closing of its conversation.
func applies(e domain.Event) bool {
	switch e.Type {
	case turn.MessageReceived{}.EventType(), turn.MessagesMerged{}.EventType(),
		turn.ContextBuilt{}.EventType(), turn.ReplyReady{}.EventType():
		return domain.TurnIDFromStream(e.StreamID) != ""
	case turn.ConversationClosed{}.EventType():
		return summary.ConversationIDFromSummaryStream(e.StreamID) != ""
	}
	return false
}

func (m ReadModel) apply(ctx context.Context, tx *readmodel.Tx, e domain.Event, p domain.Payload) error {
	id, at := domain.TurnIDFromStream(e.StreamID), e.RecordedAt.UnixMicro()
	switch ev := p.(type) {
	case turn.MessageReceived:
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (turn_id, chat, input) VALUES ($1, $2, $3)
			ON CONFLICT (turn_id) DO NOTHING`, tx.T("recall_turns")), id, ev.Chat().Key(), ev.Text)
		return err
	case turn.MessagesMerged:
		return merged(ctx, tx, id, ev, at)
	case turn.ContextBuilt:
		return contextBuilt(ctx, tx, id, ev, at)
	case turn.ReplyReady:
		pa, ok, err := passageOf(ctx, tx, id)
		if err != nil || !ok || ev.Text == "" {
			return err
		}
		pa.key, pa.kind, pa.at, pa.body = id+"/"+KindAssistant, KindAssistant, at, ev.Text
		return upsert(ctx, tx, pa)
	case turn.ConversationClosed:
		if ev.Summary == "" {
			return nil
		}
		return upsert(ctx, tx, passage{key: "summary/" + ev.ConversationID, chat: ev.Sender, conv: ev.ConversationID,
			project: ev.Project, kind: KindSummary, at: at, body: ev.Summary})
	}
	return nil
}
