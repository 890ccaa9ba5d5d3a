package projections

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/exchanges"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Queries answers every question asked of the read models. The package
// that builds a table is the only one that reads it: the rest of omega
// asks through these typed methods and never sees SQL or a database
// handle, so a changed table shape is one package's business.
type Queries struct {
	db      *sql.DB
	dialect readmodel.Dialect
	stmts   *readmodel.Statements
	kept    *exchanges.Set // see Kept
}

// NewQueries returns the read-model queries on db (on SQLite a pool of
// readers, so queries do not wait behind appends).
func NewQueries(db *sql.DB, d readmodel.Dialect) (*Queries, error) {
	if db == nil {
		return nil, errors.New("projections: queries need a database")
	}
	if d != readmodel.Postgres && d != readmodel.SQLite {
		return nil, fmt.Errorf("projections: unknown dialect %q", d)
	}
	return &Queries{db: db, dialect: d, stmts: readmodel.NewStatements(db, d), kept: exchanges.NewSet()}, nil
}

// Kept are the exchanges of the turns this process completed, which the
// turns read model may not show yet: RecentConversation adds them to what
// it shows.
func (q *Queries) Kept() *exchanges.Set { return q.kept }

// query runs a read, prepared once where that pays (see readmodel.Statements).
func (q *Queries) query(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if st := q.stmts.Get(ctx, text); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.db.QueryContext(ctx, text, args...)
}

// queryRow is query for one row.
func (q *Queries) queryRow(ctx context.Context, text string, args ...any) *sql.Row {
	if st := q.stmts.Get(ctx, text); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.db.QueryRowContext(ctx, text, args...)
}

// OpenTurn is a turn that has not completed yet. Chat is the key of the
// conversation it joins (turn.MessageReceived.Chat): the sender's in a
// private chat, the group's in a group; the scheduler orders turns by it.
type OpenTurn struct {
	ID, Sender, Chat, Channel string
	Acked                     bool
	ReceivedAt                time.Time // zero where the query does not read it
}

// OpenTurns returns the open turns of the given channels, grouped by sender
// in arrival order.
func (q *Queries) OpenTurns(ctx context.Context, channels []string) ([]OpenTurn, error) {
	if len(channels) == 0 {
		return nil, nil
	}
	ph := make([]string, len(channels))
	args := make([]any, len(channels))
	for i, c := range channels {
		ph[i] = fmt.Sprintf("$%d", i+1)
		args[i] = c
	}
	rows, err := q.query(ctx, `SELECT turn_id, sender, channel, acked FROM turns WHERE status = 'open' AND channel IN (`+
		strings.Join(ph, ", ")+`) ORDER BY sender, arrival`, args...)
	if err != nil {
		return nil, fmt.Errorf("read open turns: %w", err)
	}
	defer rows.Close()
	var out []OpenTurn
	for rows.Next() {
		var t OpenTurn
		var acked int
		if err := rows.Scan(&t.ID, &t.Sender, &t.Channel, &acked); err != nil {
			return nil, fmt.Errorf("read open turns: %w", err)
		}
		t.Acked = acked != 0
		out = append(out, t)
	}
	return out, rows.Err()
}

// OpenQueue returns every open turn, grouped by chat (the conversation it
// joins) in arrival order, and the position of the last event the turns
// read model has applied, read in one statement so that the two agree
// (every turn received at or before that position is in the answer unless
// it has completed): one read serves the queues of all chats at once.
func (q *Queries) OpenQueue(ctx context.Context) ([]OpenTurn, int64, error) {
	rows, err := q.query(ctx, `SELECT c.position, t.turn_id, t.sender, t.chat, t.channel, t.acked, t.received_at FROM checkpoints c
		LEFT JOIN turns t ON t.status = 'open'
		WHERE c.name = $1 ORDER BY t.chat, t.arrival`, readmodel.CheckpointName(Turns{}))
	if err != nil {
		return nil, 0, fmt.Errorf("read open turns: %w", err)
	}
	defer rows.Close()
	var out []OpenTurn
	var pos int64
	for rows.Next() {
		var id, snd, chat, channel sql.NullString
		var acked, received sql.NullInt64
		if err := rows.Scan(&pos, &id, &snd, &chat, &channel, &acked, &received); err != nil {
			return nil, 0, fmt.Errorf("read open turns: %w", err)
		}
		if id.Valid {
			out = append(out, OpenTurn{ID: id.String, Sender: snd.String, Chat: chat.String, Channel: channel.String,
				Acked: acked.Int64 != 0, ReceivedAt: time.UnixMicro(received.Int64)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read open turns: %w", err)
	}
	return out, pos, nil
}

// SenderTurns returns the ids of a sender's latest turns, oldest first.
func (q *Queries) SenderTurns(ctx context.Context, snd sender.SenderRef, limit int) ([]string, error) {
	ids, err := strings1(ctx, q.db, `SELECT turn_id FROM turns WHERE sender = $1 ORDER BY arrival DESC LIMIT $2`, snd.Key(), limit)
	if err != nil {
		return nil, fmt.Errorf("find turns of %s: %w", snd.Key(), err)
	}
	// Oldest first reads like a conversation.
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, nil
}

// strings1 returns the one text column q selects.
func strings1(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// CountConversations returns how many conversations a sender has had.
func (q *Queries) CountConversations(ctx context.Context, snd string) (int, error) {
	var n int
	if err := q.queryRow(ctx, `SELECT count(*) FROM conversations WHERE sender = $1`, snd).Scan(&n); err != nil {
		return 0, fmt.Errorf("count conversations of %s: %w", snd, err)
	}
	return n, nil
}

// CountMessages returns how many messages a sender's conversations hold.
func (q *Queries) CountMessages(ctx context.Context, snd string) (int, error) {
	var n int
	if err := q.queryRow(ctx, `SELECT count(*) FROM messages WHERE sender = $1`, snd).Scan(&n); err != nil {
		return 0, fmt.Errorf("count messages of %s: %w", snd, err)
	}
	return n, nil
}

// History returns the last limit messages of a conversation, oldest
// first, each naming the turn it comes from.
func (q *Queries) History(ctx context.Context, conversationID string, limit int) ([]turn.HistoryMessage, error) {
	rows, err := q.query(ctx, `SELECT role, text, turn_id FROM messages WHERE conversation_id = $1 ORDER BY at DESC, role ASC LIMIT $2`, conversationID, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", conversationID, err)
	}
	defer rows.Close()
	var out []turn.HistoryMessage
	for rows.Next() {
		var m turn.HistoryMessage
		if err := rows.Scan(&m.Role, &m.Text, &m.Turn); err != nil {
			return nil, fmt.Errorf("read history of %s: %w", conversationID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history of %s: %w", conversationID, err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// OpenConversation is a conversation not closed yet.
type OpenConversation struct {
	ID, Channel, SenderID, Project string
	Messages                       int
	LastAt                         time.Time
}

// openConversations selects conversations that are not closed and have no
// turn still running on them: a turn in flight would add to a closed one.
const openConversations = `FROM conversations c WHERE c.closed_at IS NULL
	AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = c.id AND t.status = 'open')`

// OpenConversations returns the open conversations last active at or
// before lastBefore, oldest first.
func (q *Queries) OpenConversations(ctx context.Context, lastBefore time.Time) ([]OpenConversation, error) {
	rows, err := q.query(ctx, `SELECT c.id, c.sender, c.project, c.messages, c.last_at `+openConversations+
		` AND c.last_at <= $1 ORDER BY c.last_at`, lastBefore.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("read open conversations: %w", err)
	}
	defer rows.Close()
	var out []OpenConversation
	for rows.Next() {
		var c OpenConversation
		var snd string
		var last int64
		if err := rows.Scan(&c.ID, &snd, &c.Project, &c.Messages, &last); err != nil {
			return nil, fmt.Errorf("read open conversations: %w", err)
		}
		// Sender keys are "<channel>-<id>"; channel names have no dash.
		c.Channel, c.SenderID, _ = strings.Cut(snd, "-")
		c.LastAt = time.UnixMicro(last)
		out = append(out, c)
	}
	return out, rows.Err()
}

// OldestOpenConversation returns when the least recently active open
// conversation was last active; false when there is none.
func (q *Queries) OldestOpenConversation(ctx context.Context) (time.Time, bool, error) {
	var last sql.NullInt64
	if err := q.queryRow(ctx, `SELECT MIN(c.last_at) `+openConversations).Scan(&last); err != nil {
		return time.Time{}, false, fmt.Errorf("read oldest open conversation: %w", err)
	}
	return time.UnixMicro(last.Int64), last.Valid, nil
}

// LatestConversation tells whether id is still the newest conversation
// of its sender in its project.
func (q *Queries) LatestConversation(ctx context.Context, snd, project, id string) (bool, error) {
	var newer int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM conversations n, conversations c
		WHERE c.id = $3 AND n.sender = $1 AND n.project = $2 AND n.id <> c.id AND n.started_at > c.started_at`,
		snd, project, id).Scan(&newer)
	if err != nil {
		return false, fmt.Errorf("read conversations of %s: %w", snd, err)
	}
	return newer == 0, nil
}

// RecentSummaries returns a sender's latest conversation summaries in a
// project, newest first.
func (q *Queries) RecentSummaries(ctx context.Context, snd, project string, limit int) ([]string, error) {
	out, err := strings1(ctx, q.db, `SELECT summary FROM summaries WHERE sender = $1 AND project = $2
		ORDER BY closed_at DESC LIMIT $3`, snd, project, limit)
	if err != nil {
		return nil, fmt.Errorf("read summaries of %s: %w", snd, err)
	}
	return out, nil
}

// Fact is one remembered fact as the facts read model holds it.
type Fact struct {
	Sender, Key, Value string
}

// Facts returns the facts about one sender, or about everyone when sender
// is nil, ordered by sender and key.
func (q *Queries) Facts(ctx context.Context, snd *sender.SenderRef) ([]Fact, error) {
	query, args := `SELECT sender, key, value FROM facts ORDER BY sender, key`, []any{}
	if snd != nil {
		query, args = `SELECT sender, key, value FROM facts WHERE sender = $1 ORDER BY key`, []any{snd.Key()}
	}
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	defer rows.Close()
	var out []Fact
	for rows.Next() {
		var f Fact
		if err := rows.Scan(&f.Sender, &f.Key, &f.Value); err != nil {
			return nil, fmt.Errorf("read facts: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	return out, nil
}

// TaskRow is one task as the tasks read model holds it.
type TaskRow struct {
	ID, Description, Repeat, Kind, Project, Status string
	Due                                            time.Time
	Sender, LastError                              string
	Fired                                          int
	ChatID                                         string // where it is delivered
}

// ShortID is the id prefix shown to users and accepted by /cancel.
func (t TaskRow) ShortID() string { return task.ShortTaskID(t.ID) }

// SenderTasks returns a sender's tasks ordered by due time; pendingOnly
// leaves out cancelled, done and failed ones.
func (q *Queries) SenderTasks(ctx context.Context, snd string, pendingOnly bool) ([]TaskRow, error) {
	query := taskColumns + ` WHERE sender = $1`
	if pendingOnly {
		query += ` AND status = 'pending'`
	}
	return q.tasks(ctx, query+` ORDER BY due_at, id`, snd)
}

// AllTasks returns every sender's tasks ordered by due time; all includes
// cancelled and done ones.
func (q *Queries) AllTasks(ctx context.Context, all bool) ([]TaskRow, error) {
	query := taskColumns
	if !all {
		query += ` WHERE status IN ('pending', 'failed')`
	}
	return q.tasks(ctx, query+` ORDER BY due_at, id`)
}

const taskColumns = `SELECT id, description, repeat, kind, project, status, due_at, sender, last_error, fired, chat_id FROM tasks`

func (q *Queries) tasks(ctx context.Context, query string, args ...any) ([]TaskRow, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read tasks: %w", err)
	}
	defer rows.Close()
	var out []TaskRow
	for rows.Next() {
		var t TaskRow
		var due int64
		if err := rows.Scan(&t.ID, &t.Description, &t.Repeat, &t.Kind, &t.Project, &t.Status, &due, &t.Sender, &t.LastError, &t.Fired, &t.ChatID); err != nil {
			return nil, fmt.Errorf("read tasks: %w", err)
		}
		t.Due = time.UnixMicro(due).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}
