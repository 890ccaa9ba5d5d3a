package projections

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Turns is the read model of turns: the open-turns queue the scheduler
// works from (in arrival order per chat), conversations with their
// messages, and the audit log. They share one projection so that when a
// turn shows as completed, its exchange is already in the history the
// chat's next turn reads.
type Turns struct{}

func (Turns) Name() string { return "turns" }

// Version 2 added conversations.closed_at; 3 bounds sender keys and
// replaces NUL (see sender.SenderKey, Tx.ExecContext); 4 adds usage (tokens,
// cost, provider time over every call) and the audit's query columns and
// indexes (see audit_table.go); 5 adds turns.chat, whose conversation a turn
// joins: a group chat's own rather than its member's (turn.MessageReceived.Chat).
func (Turns) Version() int { return 5 }
func (Turns) Tables() []string {
	return []string{"turns", "conversations", "messages", "audit"}
}

func (Turns) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return append([]string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			turn_id         TEXT PRIMARY KEY,
			sender          TEXT NOT NULL,
			channel         TEXT NOT NULL,
			sender_id       TEXT NOT NULL,
			chat_id         TEXT NOT NULL,
			chat            TEXT NOT NULL,
			arrival         BIGINT NOT NULL,
			received_at     BIGINT NOT NULL,
			input           TEXT NOT NULL,
			status          TEXT NOT NULL DEFAULT 'open',
			acked           INTEGER NOT NULL DEFAULT 0,
			conversation_id TEXT NOT NULL DEFAULT '',
			project         TEXT NOT NULL DEFAULT '',
			provider        TEXT NOT NULL DEFAULT '',
			model           TEXT NOT NULL DEFAULT '',
			duration_ms     BIGINT NOT NULL DEFAULT 0,
			prompt_bytes    BIGINT NOT NULL DEFAULT 0,
			reply_bytes     BIGINT NOT NULL DEFAULT 0,
			output          TEXT NOT NULL DEFAULT '',
			completed_at    BIGINT,
			`+UsageColumns+`
		)`, t("turns")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (status, sender, arrival)`, t("turns_open"), t("turns")),
		// turnReceived numbers arrivals with MAX(arrival) + 1: without this
		// index every message would scan every turn.
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (arrival)`, t("turns_arrival"), t("turns")),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id         TEXT PRIMARY KEY,
			sender     TEXT NOT NULL,
			project    TEXT NOT NULL,
			started_at BIGINT NOT NULL,
			last_at    BIGINT NOT NULL,
			messages   BIGINT NOT NULL DEFAULT 0,
			closed_at  BIGINT
		)`, t("conversations")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (sender, project, last_at)`, t("conversations_by_sender"), t("conversations")),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			turn_id         TEXT NOT NULL,
			role            TEXT NOT NULL,
			conversation_id TEXT NOT NULL,
			sender          TEXT NOT NULL,
			project         TEXT NOT NULL,
			text            TEXT NOT NULL,
			at              BIGINT NOT NULL,
			PRIMARY KEY (turn_id, role)
		)`, t("messages")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (conversation_id, at)`, t("messages_by_conversation"), t("messages")),
	}, auditSchema(t)...)
}

// SenderKey is how read models name a sender (see sender.SenderKey).
func SenderKey(channel, senderID string) string { return sender.SenderKey(channel, senderID) }

// turnStep is one event's effect on the turn tables: the turn, the time
// it was recorded and how to run a statement within the projection's
// transaction.
type turnStep struct {
	ctx  context.Context
	tx   *readmodel.Tx
	id   string
	at   int64
	exec func(string, ...any) error
}

// turnAppliers are the events the turns projection reads, each with its
// effect beyond the usage every call records. ProviderFailed and
// PlanStepCompleted only add usage.
var turnAppliers = map[string]func(turnStep, domain.Payload) error{
	turn.MessageReceived{}.EventType():    applyTurn(turnReceived),
	turn.AckSent{}.EventType():            applyTurn(turnAcked),
	turn.ContextBuilt{}.EventType():       applyTurn(turnContextBuilt),
	turn.RouteDecided{}.EventType():       applyTurn(turnRouteDecided),
	turn.ProviderReplied{}.EventType():    usageOnly, // with its provider and model
	turn.ProviderFailed{}.EventType():     usageOnly,
	turn.PlanStepCompleted{}.EventType():  usageOnly,
	turn.ReplyReady{}.EventType():         applyTurn(turnReplyReady),
	turn.CommandAnswered{}.EventType():    applyTurn(turnCommandAnswered),
	turn.ConversationClosed{}.EventType(): applyTurn(turnConversationClosed),
	turn.TurnCompleted{}.EventType():      applyTurn(turnCompleted),
	turn.MessagesMerged{}.EventType():     applyTurn(turnMessagesMerged),
}

// turnMessagesMerged adds the merged messages to the turn's input, so the
// conversation's history holds the burst as the model saw it.
func turnMessagesMerged(s turnStep, ev turn.MessagesMerged) error {
	if len(ev.Texts) == 0 {
		return nil
	}
	return s.exec(fmt.Sprintf(`UPDATE %s SET input = input || $2 WHERE turn_id = $1`, s.tx.T("turns")),
		s.id, "\n"+strings.Join(ev.Texts, "\n"))
}

// applyTurn adapts a typed effect to the table; a payload of another
// type has no effect.
func applyTurn[T domain.Payload](f func(turnStep, T) error) func(turnStep, domain.Payload) error {
	return func(s turnStep, p domain.Payload) error {
		ev, ok := p.(T)
		if !ok {
			return nil
		}
		return f(s, ev)
	}
}

func usageOnly(turnStep, domain.Payload) error { return nil }

// belongsToTurns says whether an event of the stream concerns the turns
// tables: a turn's own events, and the closing of a conversation on its
// summary stream.
func belongsToTurns(e domain.Event, turnID string) bool {
	if turnID != "" {
		return true
	}
	return e.Type == turn.ConversationClosed{}.EventType() && summary.ConversationIDFromSummaryStream(e.StreamID) != ""
}

func (Turns) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	p, err := decodeTurnEvent(tx, e)
	if p == nil || err != nil {
		return err
	}
	return applyTurnEvent(ctx, tx, e, p)
}

// decodeTurnEvent is e's payload when the turns model applies e, else
// nil.
func decodeTurnEvent(tx *readmodel.Tx, e domain.Event) (domain.Payload, error) {
	if !belongsToTurns(e, domain.TurnIDFromStream(e.StreamID)) {
		return nil, nil
	}
	if _, ok := turnAppliers[e.Type]; !ok {
		return nil, nil
	}
	return tx.Decode(e)
}

// applyTurnEvent applies an event of the turns model, decoded.
func applyTurnEvent(ctx context.Context, tx *readmodel.Tx, e domain.Event, p domain.Payload) error {
	id, apply := domain.TurnIDFromStream(e.StreamID), turnAppliers[e.Type]
	s := turnStep{ctx: ctx, tx: tx, id: id, at: e.RecordedAt.UnixMicro(), exec: func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("turns: apply %s of %s: %w", e.Type, id, err)
		}
		return nil
	}}
	if u, ok := callUsageOf(p); ok {
		// A reply also names its provider and model: one statement.
		var also []turnSet
		if r, ok := p.(turn.ProviderReplied); ok {
			also = []turnSet{{"provider", r.Provider}, {"model", r.Model}}
		}
		if err := addUsage(s.exec, tx, id, u, also...); err != nil {
			return err
		}
	}
	return apply(s, p)
}

func turnReceived(s turnStep, ev turn.MessageReceived) error {
	return s.exec(fmt.Sprintf(`INSERT INTO %[1]s (turn_id, sender, channel, sender_id, chat_id, chat, arrival, received_at, input)
			SELECT $1, $2, $3, $4, $5, $6, COALESCE(MAX(arrival), 0) + 1, $7, $8 FROM %[1]s`, s.tx.T("turns")),
		s.id, SenderKey(ev.Channel, ev.SenderID), ev.Channel, ev.SenderID, ev.ChatID, ev.Chat().Key(), s.at, ev.Text)
}

func turnAcked(s turnStep, _ turn.AckSent) error {
	return s.exec(fmt.Sprintf(`UPDATE %s SET acked = 1 WHERE turn_id = $1`, s.tx.T("turns")), s.id)
}

func turnContextBuilt(s turnStep, ev turn.ContextBuilt) error {
	// The model asked for; a reply names the one that answered.
	set, args := `conversation_id = $2, project = $3, model = $4`, []any{ev.ConversationID, ev.Project, ev.Model}
	if s.tx.Dialect == readmodel.Postgres {
		return s.messageInOneStatement("ContextBuilt", set, args, "user", "t.input")
	}
	// The update returns what the user's message needs.
	var input, chat string
	err := s.tx.QueryRowContext(s.ctx, fmt.Sprintf(`UPDATE %s SET %s WHERE turn_id = $1 RETURNING input, chat`, s.tx.T("turns"), set),
		append([]any{s.id}, args...)...).Scan(&input, &chat)
	if err != nil {
		return fmt.Errorf("turns: apply ContextBuilt of %s: %w", s.id, err)
	}
	return addMessageText(s.exec, s.tx, turnConversation{id: s.id, conv: ev.ConversationID, chat: chat, project: ev.Project}, "user", input, s.at)
}

// messageInOneStatement updates the turn (set, with args from $2) and
// adds its message (text: an expression over the updated row t, or a
// parameter) to its conversation, starting the conversation if need be,
// in one PostgreSQL statement, one round trip. A missing turn is an error.
func (s turnStep) messageInOneStatement(event, set string, args []any, role, text string) error {
	n := len(args) + 1
	at, roleArg := fmt.Sprintf("$%d::bigint", n+1), fmt.Sprintf("$%d::text", n+2)
	q := fmt.Sprintf(`WITH t AS (
	UPDATE %[1]s SET %[2]s WHERE turn_id = $1 RETURNING turn_id, conversation_id, chat, project, input, output
), c AS (
	INSERT INTO %[3]s (id, sender, project, started_at, last_at, messages)
	SELECT t.conversation_id, t.chat, t.project, %[4]s, %[4]s, 1 FROM t WHERE t.conversation_id <> ''
	ON CONFLICT (id) DO UPDATE SET last_at = GREATEST(%[3]s.last_at, excluded.last_at), messages = %[3]s.messages + 1
), m AS (
	INSERT INTO %[5]s (turn_id, role, conversation_id, sender, project, text, at)
	SELECT t.turn_id, %[6]s, t.conversation_id, t.chat, t.project, %[7]s, %[4]s FROM t WHERE t.conversation_id <> ''
	ON CONFLICT (turn_id, role) DO UPDATE SET text = excluded.text
)
SELECT count(*) FROM t`, s.tx.T("turns"), set, s.tx.T("conversations"), at, s.tx.T("messages"), roleArg, text)
	var found int
	all := append(append([]any{s.id}, args...), s.at, role)
	if err := s.tx.QueryRowContext(s.ctx, q, all...).Scan(&found); err != nil {
		return fmt.Errorf("turns: apply %s of %s: %w", event, s.id, err)
	}
	if found != 1 {
		return fmt.Errorf("turns: apply %s of %s: no such turn", event, s.id)
	}
	return nil
}

func turnReplyReady(s turnStep, ev turn.ReplyReady) error {
	if s.tx.Dialect == readmodel.Postgres {
		return s.messageInOneStatement("ReplyReady", "output = $2", []any{ev.Text}, "assistant", "t.output")
	}
	c := turnConversation{id: s.id}
	err := s.tx.QueryRowContext(s.ctx, fmt.Sprintf(`UPDATE %s SET output = $2 WHERE turn_id = $1 RETURNING conversation_id, chat, project`, s.tx.T("turns")),
		s.id, ev.Text).Scan(&c.conv, &c.chat, &c.project)
	if err != nil {
		return fmt.Errorf("turns: apply ReplyReady of %s: %w", s.id, err)
	}
	return addMessageText(s.exec, s.tx, c, "assistant", ev.Text, s.at)
}

func turnRouteDecided(s turnStep, ev turn.RouteDecided) error {
	if ev.Direct {
		return nil // the direct call's ProviderReplied names the model
	}
	// A plan's steps run on this model; the audit row names it.
	return s.exec(fmt.Sprintf(`UPDATE %s SET model = $2 WHERE turn_id = $1`, s.tx.T("turns")), s.id, ev.Model)
}

// turnConversationClosed marks a conversation closed on purpose (forget)
// or summarized: the next message starts a new one.
func turnConversationClosed(s turnStep, ev turn.ConversationClosed) error {
	return s.exec(fmt.Sprintf(`UPDATE %s SET closed_at = $2 WHERE id = $1`, s.tx.T("conversations")), ev.ConversationID, s.at)
}

func turnCommandAnswered(s turnStep, ev turn.CommandAnswered) error {
	return s.exec(fmt.Sprintf(`UPDATE %s SET output = $2 WHERE turn_id = $1`, s.tx.T("turns")), s.id, ev.Reply)
}

func turnCompleted(s turnStep, ev turn.TurnCompleted) error {
	if s.tx.Dialect == readmodel.Postgres {
		// The audit row is copied from the updated turn in the same
		// statement.
		return s.exec(fmt.Sprintf(`WITH done AS (UPDATE %s SET status = $3, completed_at = $2 WHERE turn_id = $1 RETURNING *) %s`,
			s.tx.T("turns"), auditInsertFrom(s.tx, "done")), s.id, s.at, ev.Status)
	}
	if err := s.exec(fmt.Sprintf(`UPDATE %s SET status = $2, completed_at = $3 WHERE turn_id = $1`, s.tx.T("turns")), s.id, ev.Status, s.at); err != nil {
		return err
	}
	return s.exec(auditInsert(s.tx), s.id, s.at)
}

// turnConversation is where a turn's messages go; chat is the key the
// conversation is kept under (the conversations' sender column).
type turnConversation struct {
	id, conv, chat, project string
}

// addMessageText appends a message to the turn's conversation, starting
// the conversation if this is its first message; a turn outside any
// conversation (a command) adds none. SQLite only (its MAX of two values);
// a conversation's last activity is its latest message's, whatever order
// the messages are applied in (see Turns.ApplyBatch).
func addMessageText(exec func(string, ...any) error, tx *readmodel.Tx, c turnConversation, role, text string, at int64) error {
	if c.conv == "" {
		return nil
	}
	if err := exec(fmt.Sprintf(`INSERT INTO %[1]s (id, sender, project, started_at, last_at, messages) VALUES ($1, $2, $3, $4, $4, 1)
		ON CONFLICT (id) DO UPDATE SET last_at = MAX(%[1]s.last_at, excluded.last_at), messages = %[1]s.messages + 1`, tx.T("conversations")),
		c.conv, c.chat, c.project, at); err != nil {
		return err
	}
	return exec(fmt.Sprintf(`INSERT INTO %s (turn_id, role, conversation_id, sender, project, text, at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (turn_id, role) DO UPDATE SET text = excluded.text`, tx.T("messages")),
		c.id, role, c.conv, c.chat, c.project, text, at)
}

// Sessions is the read model of provider sessions per sender (or group
// chat, see sender.GroupRef) and project.
type Sessions struct{}

func (Sessions) Name() string     { return "sessions" }
func (Sessions) Tables() []string { return []string{"provider_sessions"} }
func (Sessions) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
		sender     TEXT NOT NULL,
		project    TEXT NOT NULL,
		session_id TEXT NOT NULL,
		provider   TEXT NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (sender, project)
	)`, t("provider_sessions"))}
}

func (Sessions) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	snd, _, _, ok := facts.SenderOf(e.StreamID)
	if !ok || (e.Type != "SessionStarted" && e.Type != "SessionCleared") {
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	var q string
	var args []any
	switch ev := p.(type) {
	case sender.SessionStarted:
		q = fmt.Sprintf(`INSERT INTO %s (sender, project, session_id, provider, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (sender, project) DO UPDATE SET session_id = excluded.session_id, provider = excluded.provider, updated_at = excluded.updated_at`, tx.T("provider_sessions"))
		args = []any{snd, ev.Project, ev.SessionID, ev.Provider, e.RecordedAt.UnixMicro()}
	case sender.SessionCleared:
		q, args = fmt.Sprintf(`DELETE FROM %s WHERE sender = $1 AND project = $2`, tx.T("provider_sessions")), []any{snd, ev.Project}
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("sessions: apply %s of %s: %w", e.Type, snd, err)
	}
	return nil
}
