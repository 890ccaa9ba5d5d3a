package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ApplyBatch applies evs with the effect of applying them one by one, in
// a few multi-row statements on PostgreSQL (SQLite, in process, applies
// them one by one). The read model's lag holds back a chat's next turn
// whenever that turn must see it (see scheduling's pending), and one
// statement per event made the applier wait a round trip per event.
//
// Each event's effect is one or two row changes of one kind (a turn
// received, its context built, a call's usage, ...) on keys that order
// them: its turn; the conversation, for a context that may start one and
// for a summary closing it. The changes are laid out in waves, each in the
// first wave after every earlier change of its keys. A wave holds at most
// one change per key, so each of its kinds is one statement over many
// rows, and every key's changes run in the log's order. Changes with no
// key in common commute (a conversation's counters add up, its last
// activity is the latest), so running a wave ahead of a later event that
// shares no key with it changes nothing.
func (t Turns) ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error {
	if tx.Dialect != readmodel.Postgres {
		return t.applyEach(ctx, tx, evs)
	}
	w := turnWaves{depth: map[string]int{}}
	for _, e := range evs {
		if err := w.add(tx, e); err != nil {
			return fmt.Errorf("apply %s at position %d: %w", e.Type, e.Position, err)
		}
	}
	if w.statements()*3 > w.changes {
		// A batch of a turn or two (an applier keeping up) saves few round
		// trips, and a statement over a few rows costs more than one over
		// a row: the waves pay from a third of the statements down
		// (BenchmarkApplyTurns: even at 20 events a batch, 2.4x at 1,000).
		for _, d := range w.decoded {
			if err := applyTurnEvent(ctx, tx, d.e, d.p); err != nil {
				return fmt.Errorf("apply %s at position %d: %w", d.e.Type, d.e.Position, err)
			}
		}
		return nil
	}
	for _, wave := range w.waves {
		for k, rows := range wave {
			if len(rows) == 0 {
				continue
			}
			if err := turnKinds[k].exec(ctx, tx, rows); err != nil {
				return fmt.Errorf("turns: %s of %d rows: %w", turnKinds[k].name, len(rows), err)
			}
		}
	}
	return nil
}

func (t Turns) applyEach(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error {
	for _, e := range evs {
		if err := t.Apply(ctx, tx, e); err != nil {
			return fmt.Errorf("apply %s at position %d: %w", e.Type, e.Position, err)
		}
	}
	return nil
}

// turnWaves is a batch's changes laid out in waves (see ApplyBatch).
type turnWaves struct {
	depth   map[string]int             // key -> changes so far
	waves   [][numTurnKinds][][]string // wave -> kind -> rows, in log order
	changes int
	decoded []decodedEvent // the batch's events of the turns model
}

type decodedEvent struct {
	e domain.Event
	p domain.Payload
}

// statements is how many statements the waves take.
func (w *turnWaves) statements() int {
	n := 0
	for _, wave := range w.waves {
		for _, rows := range wave {
			if len(rows) > 0 {
				n++
			}
		}
	}
	return n
}

// put adds a change to the first wave after every earlier change of each
// of its keys.
func (w *turnWaves) put(k turnKind, keys []string, row ...string) {
	d := 0
	for _, key := range keys {
		d = max(d, w.depth[key])
	}
	for _, key := range keys {
		w.depth[key] = d + 1
	}
	w.changes++
	for d >= len(w.waves) {
		w.waves = append(w.waves, [numTurnKinds][][]string{})
	}
	w.waves[d][k] = append(w.waves[d][k], row)
}

// add lays out one event's changes, as Turns.Apply would make them.
func (w *turnWaves) add(tx *readmodel.Tx, e domain.Event) error {
	p, err := decodeTurnEvent(tx, e)
	if p == nil || err != nil {
		return err
	}
	id := domain.TurnIDFromStream(e.StreamID)
	w.decoded = append(w.decoded, decodedEvent{e, p})
	w.putUsage(id, p)
	w.putEffect(id, num(e.RecordedAt.UnixMicro()), p)
	return nil
}

// putUsage lays out the usage of the provider call p records, if any.
func (w *turnWaves) putUsage(id string, p domain.Payload) {
	u, ok := callUsageOf(p)
	if !ok {
		return
	}
	set, provider, model := "false", "", ""
	if r, ok := p.(turn.ProviderReplied); ok { // a reply names its provider and model
		set, provider, model = "true", r.Provider, r.Model
	}
	reported := "0"
	if u.UsageReported {
		reported = "1"
	}
	w.put(kindUsage, []string{id}, id, num(u.DurationMs), num(int64(u.PromptBytes)), num(int64(u.ReplyBytes)),
		num(int64(u.InputTokens)), num(int64(u.OutputTokens)), num(int64(u.CacheReadTokens)), num(int64(u.CacheWriteTokens)),
		strconv.FormatFloat(u.CostUSD, 'g', -1, 64), reported, set, provider, model)
}

// putEffect lays out what p does beyond its usage, recorded at at.
func (w *turnWaves) putEffect(id, at string, p domain.Payload) {
	turnKey := []string{id}
	switch ev := p.(type) {
	case turn.MessageReceived:
		w.put(kindReceived, turnKey, id, SenderKey(ev.Channel, ev.SenderID), ev.Channel, ev.SenderID, ev.ChatID, ev.Chat().Key(), at, ev.Text)
	case turn.AckSent:
		w.put(kindAcked, turnKey, id)
	case turn.MessagesMerged:
		if len(ev.Texts) > 0 {
			w.put(kindMerged, turnKey, id, "\n"+strings.Join(ev.Texts, "\n"))
		}
	case turn.ContextBuilt:
		keys := turnKey
		if ev.ConversationID != "" { // it may start the conversation a summary closes later
			keys = []string{id, conversationKey(ev.ConversationID)}
		}
		w.put(kindContext, keys, id, ev.ConversationID, ev.Project, ev.Model, at)
	case turn.RouteDecided:
		if !ev.Direct {
			w.put(kindRouteModel, turnKey, id, ev.Model)
		}
	case turn.ReplyReady:
		w.put(kindReply, turnKey, id, ev.Text, at)
	case turn.CommandAnswered:
		w.put(kindCommand, turnKey, id, ev.Reply)
	case turn.ConversationClosed:
		w.put(kindClosed, []string{conversationKey(ev.ConversationID)}, ev.ConversationID, at)
	case turn.TurnCompleted:
		w.put(kindCompleted, turnKey, id, at, ev.Status)
	}
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

// conversationKey orders a conversation's start and its closing.
func conversationKey(id string) string { return "conversation " + id }

// turnKind is one kind of row change of the turn tables.
type turnKind int

const (
	kindReceived turnKind = iota
	kindAcked
	kindMerged
	kindContext
	kindRouteModel
	kindUsage
	kindReply
	kindCommand
	kindClosed
	kindCompleted
	numTurnKinds
)

// turnKindSQL is a kind's multi-row statement: cols are the columns of
// its rows, each with its type; sql is the statement, with %[1]s for the
// rows (a relation v of those columns and ord, the row's place in the log
// order), %[2]s for the array of their ids (see rowKeys) and t for the physical table names. A checked
// statement returns how many turns it found, which must be every row.
type turnKindSQL struct {
	name    string
	cols    []string
	sql     func(t func(string) string) string
	checked bool
}

var turnKinds = [numTurnKinds]turnKindSQL{
	kindReceived: {"MessageReceived", []string{"id text", "snd text", "ch text", "sid text", "cid text", "chat text", "at bigint", "input text"},
		func(t func(string) string) string {
			return `INSERT INTO ` + t("turns") + ` (turn_id, sender, channel, sender_id, chat_id, chat, arrival, received_at, input)
				SELECT v.id, v.snd, v.ch, v.sid, v.cid, v.chat, m.a + v.ord, v.at, v.input
				FROM %[1]s CROSS JOIN (SELECT COALESCE(MAX(arrival), 0) AS a FROM ` + t("turns") + `) m`
		}, false},
	kindAcked: {"AckSent", []string{"id text"}, func(t func(string) string) string {
		return updateTurns(t, "acked = 1")
	}, false},
	kindMerged: {"MessagesMerged", []string{"id text", "add text"}, func(t func(string) string) string {
		return updateTurns(t, "input = "+t("turns")+".input || v.add")
	}, false},
	kindContext: {"ContextBuilt", []string{"id text", "conv text", "project text", "model text", "at bigint"},
		func(t func(string) string) string {
			return messagesSQL(t, "conversation_id = v.conv, project = v.project, model = v.model", "user", "input")
		}, true},
	kindRouteModel: {"RouteDecided", []string{"id text", "model text"}, func(t func(string) string) string {
		return updateTurns(t, "model = v.model")
	}, false},
	kindUsage: {"usage", []string{"id text", "d bigint", "pb bigint", "rb bigint", "it bigint", "ot bigint", "crt bigint", "cwt bigint",
		"cost float8", "rep int", "named bool", "provider text", "model text"},
		func(t func(string) string) string {
			return strings.ReplaceAll(updateTurns(t, `duration_ms = T.duration_ms + v.d, prompt_bytes = T.prompt_bytes + v.pb,
				reply_bytes = T.reply_bytes + v.rb, input_tokens = T.input_tokens + v.it, output_tokens = T.output_tokens + v.ot,
				cache_read_tokens = T.cache_read_tokens + v.crt, cache_write_tokens = T.cache_write_tokens + v.cwt,
				cost_usd = T.cost_usd + v.cost, usage_reported = CASE WHEN v.rep = 1 THEN 1 ELSE T.usage_reported END,
				calls = T.calls + 1, provider = CASE WHEN v.named THEN v.provider ELSE T.provider END,
				model = CASE WHEN v.named THEN v.model ELSE T.model END`), "T.", t("turns")+".")
		}, false},
	kindReply: {"ReplyReady", []string{"id text", "output text", "at bigint"}, func(t func(string) string) string {
		return messagesSQL(t, "output = v.output", "assistant", "output")
	}, true},
	kindCommand: {"CommandAnswered", []string{"id text", "output text"}, func(t func(string) string) string {
		return updateTurns(t, "output = v.output")
	}, false},
	kindClosed: {"ConversationClosed", []string{"id text", "at bigint"}, func(t func(string) string) string {
		c := t("conversations")
		return `UPDATE ` + c + ` SET closed_at = v.at FROM %[1]s WHERE ` + c + `.id = ANY(%[2]s) AND ` + c + `.id = v.id`
	}, false},
	kindCompleted: {"TurnCompleted", []string{"id text", "at bigint", "status text"}, func(t func(string) string) string {
		return `WITH done AS (` + updateTurns(t, "status = v.status, completed_at = v.at") + ` RETURNING ` + t("turns") + `.*, v.at AS done_at) ` +
			auditInsertSQL(t, "done", "done_at", "")
	}, false},
}

// messagesSQL updates the turns (set) and adds each one's message (text:
// the updated turn's column) to its conversation, starting conversations
// as need be: Turns.messageInOneStatement for many turns, with each
// conversation's rows summed (a statement may change a row only once).
func messagesSQL(t func(string) string, set, role, text string) string {
	return fmt.Sprintf(`WITH t AS (
	UPDATE %[1]s SET %[2]s FROM %%[1]s WHERE %[1]s.turn_id = ANY(%%[2]s) AND %[1]s.turn_id = v.id
	RETURNING %[1]s.turn_id, %[1]s.conversation_id, %[1]s.chat, %[1]s.project, %[1]s.%[5]s AS text, v.at, v.ord
), c AS (
	INSERT INTO %[3]s (id, sender, project, started_at, last_at, messages)
	SELECT conversation_id, (array_agg(chat ORDER BY ord))[1], (array_agg(project ORDER BY ord))[1],
		(array_agg(at ORDER BY ord))[1], max(at), count(*) FROM t WHERE conversation_id <> '' GROUP BY conversation_id
	ON CONFLICT (id) DO UPDATE SET last_at = GREATEST(%[3]s.last_at, excluded.last_at), messages = %[3]s.messages + excluded.messages
), m AS (
	INSERT INTO %[4]s (turn_id, role, conversation_id, sender, project, text, at)
	SELECT turn_id, '%[6]s', conversation_id, chat, project, text, at FROM t WHERE conversation_id <> ''
	ON CONFLICT (turn_id, role) DO UPDATE SET text = excluded.text
)
SELECT count(*) FROM t`, t("turns"), set, t("conversations"), t("messages"), text, role)
}

// updateTurns is the statement that sets set on each row's turn.
func updateTurns(t func(string) string, set string) string {
	return `UPDATE ` + t("turns") + ` SET ` + set + ` FROM %[1]s WHERE ` + t("turns") + `.turn_id = ANY(%[2]s) AND ` + t("turns") + `.turn_id = v.id`
}

// rowKeys is the array of the rows' ids, computed once before the
// statement runs: a target row is then found by its key's index. Joined
// to the rows alone, the table was scanned whole, at every statement
// (the planner cannot know how few rows the JSON holds).
const rowKeys = `ARRAY(SELECT r->>'id' FROM json_array_elements($1::json) r)`

// exec runs the kind's statement over rows (in log order).
func (k turnKindSQL) exec(ctx context.Context, tx *readmodel.Tx, rows [][]string) error {
	objs := make([]map[string]string, len(rows))
	for r, row := range rows {
		o := make(map[string]string, len(k.cols)+1)
		for c, col := range k.cols {
			name, _, _ := strings.Cut(col, " ")
			o[name] = readmodel.Storable(row[c])
		}
		o["ord"] = strconv.Itoa(r + 1)
		objs[r] = o
	}
	data, err := json.Marshal(objs)
	if err != nil {
		return err
	}
	// The rows travel as one JSON parameter: a statement's text, and so its
	// prepared plan, is the same whatever the number of rows.
	rel := fmt.Sprintf("json_to_recordset($1::json) AS v(%s, ord bigint)", strings.Join(k.cols, ", "))
	q := fmt.Sprintf(k.sql(tx.T), rel, rowKeys)
	// Sent unprepared, the statement is planned for the table as it is: a
	// plan prepared while the table was small scans it whole for good.
	if !k.checked {
		_, err := tx.Tx.ExecContext(ctx, q, string(data))
		return err
	}
	var found int
	if err := tx.Tx.QueryRowContext(ctx, q, string(data)).Scan(&found); err != nil {
		return err
	}
	if found != len(rows) {
		return fmt.Errorf("%d of %d turns found", found, len(rows))
	}
	return nil
}
