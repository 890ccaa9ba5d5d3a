package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ApplyBatch applies evs with the effect of applying them one by one: on
// PostgreSQL in three statements whatever the batch holds (the batch's
// turns read, their rows written, their passages written), SQLite one by
// one. A read model transaction holds PostgreSQL's visibility horizon from
// its first write to its commit, and every reader that waits for a commit
// of its own to become readable (a scheduler placing a message in the
// log's order) waits for it: with a statement per event, the index's
// transactions held the horizon through a round trip per event.
func (m ReadModel) ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error {
	items, err := relevant(tx, evs)
	if err != nil {
		return err
	}
	if tx.Dialect != readmodel.Postgres || len(items) < 2 {
		for _, it := range items {
			if err := m.apply(ctx, tx, it.e, it.p); err != nil {
				return fmt.Errorf("recall: apply %s of %s: %w", it.e.Type, it.e.StreamID, err)
			}
		}
		return nil
	}
	b, err := loadBatch(ctx, tx, items)
	if err != nil {
		return fmt.Errorf("recall: read the batch's turns: %w", err)
	}
	for _, it := range items {
		b.apply(it.e, it.p)
	}
	if err := b.write(ctx, tx); err != nil {
		return fmt.Errorf("recall: write a batch of %d events: %w", len(evs), err)
	}
	return nil
}

// item is an event the index applies, decoded.
type item struct {
	e domain.Event
	p domain.Payload
}

// relevant returns the events of evs the index applies (see Apply),
// decoded.
func relevant(tx *readmodel.Tx, evs []domain.Event) ([]item, error) {
	var out []item
	for _, e := range evs {
		if !applies(e) {
			continue
		}
		p, err := tx.Decode(e)
		if err != nil {
			return nil, err
		}
		out = append(out, item{e: e, p: p})
	}
	return out, nil
}

// turnRow is a recall_turns row as the batch leaves it.
type turnRow struct {
	chat, input, conv, project string
	changed                    bool
}

// batch is the index's tables as a batch changes them: the rows of the
// turns it names (those already there read first) and the passages it
// indexes, in the order first indexed.
type batch struct {
	turns    map[string]*turnRow
	passages map[string]*batchPassage
	order    []string
}

// batchPassage is a passage as its first indexing in the batch made it,
// with the text (and the chat its owned stems are for) of its last.
type batchPassage struct {
	passage
	ownedChat string
}

func loadBatch(ctx context.Context, tx *readmodel.Tx, items []item) (*batch, error) {
	b := &batch{turns: map[string]*turnRow{}, passages: map[string]*batchPassage{}}
	var ids []string
	for _, it := range items {
		if id := domain.TurnIDFromStream(it.e.StreamID); id != "" {
			ids = append(ids, id)
		}
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Tx.QueryContext(ctx, fmt.Sprintf(`SELECT turn_id, chat, input, conversation_id, project FROM %s
		WHERE turn_id = ANY(ARRAY(SELECT json_array_elements_text($1::json)))`, tx.T("recall_turns")), string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		r := &turnRow{}
		if err := rows.Scan(&id, &r.chat, &r.input, &r.conv, &r.project); err != nil {
			return nil, err
		}
		b.turns[id] = r
	}
	return b, rows.Err()
}

// apply is Apply's effect on the batch's rows and passages.
func (b *batch) apply(e domain.Event, p domain.Payload) {
	id, at := domain.TurnIDFromStream(e.StreamID), e.RecordedAt.UnixMicro()
	switch ev := p.(type) {
	case turn.MessageReceived:
		if b.turns[id] == nil {
			b.turns[id] = &turnRow{chat: readmodel.Storable(ev.Chat().Key()), input: readmodel.Storable(ev.Text), changed: true}
		}
	case turn.MessagesMerged:
		b.merged(id, ev, at)
	case turn.ContextBuilt:
		b.contextBuilt(id, ev, at)
	case turn.ReplyReady:
		if r := b.turns[id]; r != nil && r.conv != "" && ev.Text != "" {
			b.index(r.passage(id, KindAssistant, at, ev.Text))
		}
	case turn.ConversationClosed:
		if ev.Summary != "" {
			b.index(passage{key: "summary/" + ev.ConversationID, chat: ev.Sender, conv: ev.ConversationID,
				project: ev.Project, kind: KindSummary, at: at, body: ev.Summary})
		}
	}
}

// merged is merged's effect: the burst added to the turn's message, and to
// its passage once its conversation is known.
func (b *batch) merged(id string, ev turn.MessagesMerged, at int64) {
	r := b.turns[id]
	if len(ev.Texts) == 0 || r == nil {
		return
	}
	r.input, r.changed = r.input+readmodel.Storable("\n"+strings.Join(ev.Texts, "\n")), true
	if r.conv != "" {
		b.index(r.passage(id, KindUser, at, r.input))
	}
}

// contextBuilt is contextBuilt's effect: the turn put in its
// conversation, its message indexed.
func (b *batch) contextBuilt(id string, ev turn.ContextBuilt, at int64) {
	r := b.turns[id]
	if ev.ConversationID == "" || r == nil {
		return
	}
	r.conv, r.project, r.changed = readmodel.Storable(ev.ConversationID), readmodel.Storable(ev.Project), true
	if strings.TrimSpace(r.input) != "" {
		b.index(r.passage(id, KindUser, at, r.input))
	}
}

// passage is the turn's passage of kind with body, in its conversation.
func (r *turnRow) passage(id, kind string, at int64, body string) passage {
	return passage{key: id + "/" + kind, chat: r.chat, conv: r.conv, turnID: id, project: r.project, kind: kind, at: at, body: body}
}

// index is upsert's effect: a passage indexed again keeps its first
// indexing's place and time, and takes the new text.
func (b *batch) index(p passage) {
	if old := b.passages[p.key]; old != nil {
		old.body, old.ownedChat = p.body, p.chat
		return
	}
	b.passages[p.key] = &batchPassage{passage: p, ownedChat: p.chat}
	b.order = append(b.order, p.key)
}

// write stores the changed rows and the passages, each set in one
// statement (the rows travel as one JSON parameter; sent unprepared, each
// statement is planned for the tables as they are).
func (b *batch) write(ctx context.Context, tx *readmodel.Tx) error {
	var turns []map[string]string
	for id, r := range b.turns {
		if r.changed {
			turns = append(turns, map[string]string{"id": id, "chat": r.chat, "input": r.input, "conv": r.conv, "project": r.project})
		}
	}
	if len(turns) > 0 {
		if err := execRows(ctx, tx, fmt.Sprintf(`INSERT INTO %s (turn_id, chat, input, conversation_id, project)
			SELECT id, chat, input, conv, project FROM json_to_recordset($1::json) AS v(id text, chat text, input text, conv text, project text)
			ON CONFLICT (turn_id) DO UPDATE SET input = excluded.input, conversation_id = excluded.conversation_id, project = excluded.project`,
			tx.T("recall_turns")), turns); err != nil {
			return err
		}
	}
	if len(b.order) == 0 {
		return nil
	}
	passages := make([]map[string]string, len(b.order))
	for i, key := range b.order {
		p := b.passages[key]
		passages[i] = map[string]string{"key": p.key, "chat": p.chat, "conv": p.conv, "turn": p.turnID, "project": p.project,
			"kind": p.kind, "at": fmt.Sprint(p.at), "body": p.body, "stems": stemText(p.body), "owned": ownedText(p.ownedChat, p.body)}
	}
	return execRows(ctx, tx, fmt.Sprintf(`WITH v AS MATERIALIZED (
			SELECT * FROM json_to_recordset($1::json) AS v(key text, chat text, conv text, turn text, project text, kind text, at bigint, body text, stems text, owned text)
		), passage AS (
			INSERT INTO %s (key, chat, conversation_id, turn_id, project, kind, at, body)
			SELECT key, chat, conv, turn, project, kind, at, body FROM v ON CONFLICT (key) DO UPDATE SET body = excluded.body)
		INSERT INTO %s (key, chat, conversation_id, tsv, owned)
		SELECT key, chat, conv, to_tsvector('simple', stems), to_tsvector('simple', owned) FROM v
		ON CONFLICT (key) DO UPDATE SET tsv = excluded.tsv, owned = excluded.owned`, tx.T("recall_passages"), tx.T("recall_fts")), passages)
}

// execRows runs q with rows as its JSON parameter, every text storable.
func execRows(ctx context.Context, tx *readmodel.Tx, q string, rows []map[string]string) error {
	for _, r := range rows {
		for k, v := range r {
			r[k] = readmodel.Storable(v)
		}
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = tx.Tx.ExecContext(ctx, q, string(data))
	return err
}
