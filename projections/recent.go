package projections

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/exchanges"
)

// RecentConversation is a sender's latest conversation in a project with
// its last messages, oldest first.
type RecentConversation struct {
	ID      string
	LastAt  time.Time
	History []turn.HistoryMessage
}

// RecentConversation returns the sender's latest conversation in the
// project with its last limit messages, in one query (a turn's context
// needs both, and a round trip less shortens every turn): false when the
// sender has no conversation in the project or the latest is closed. The
// exchanges of the sender's (chat's) turns this process kept (Kept) and
// the read model does not show yet are in it, as the read model will add
// them; those it shows are forgotten.
func (q *Queries) RecentConversation(ctx context.Context, snd, project string, limit int) (RecentConversation, bool, error) {
	c, ok, applied, err := q.RecentConversationWith(ctx, snd, project, limit, q.kept.Chat(snd))
	q.kept.Applied(applied)
	return c, ok, err
}

// RecentConversationWith is RecentConversation with pending for the
// exchanges kept: those of the chat's (snd's) latest turns, in the order
// they ran. The same query tells which the read model shows already (a
// statement reads one snapshot, whatever the applier commits meanwhile):
// applied lists those; the others are added to what it shows.
func (q *Queries) RecentConversationWith(ctx context.Context, snd, project string, limit int, pending []exchanges.Exchange) (RecentConversation, bool, []string, error) {
	pending = slices.DeleteFunc(slices.Clone(pending), func(x exchanges.Exchange) bool { return x.Project != project })
	rows, err := q.query(ctx, recentConversationSQL(len(pending)), recentConversationArgs(snd, project, limit, pending)...)
	if err != nil {
		return RecentConversation{}, false, nil, fmt.Errorf("read last conversation of %s: %w", snd, err)
	}
	defer rows.Close()
	var (
		out           RecentConversation
		found, closed bool
		applied       []string
		// Scanned into row by row: declared in the loop, each row's
		// values escaped to the heap of their own.
		kind, last, at int64
		id             string
		isClosed       bool
		role, text, tn string
	)
	out.History = make([]turn.HistoryMessage, 0, min(max(limit, 0), 256))
	for rows.Next() {
		if err := rows.Scan(&kind, &id, &last, &isClosed, &role, &text, &tn, &at); err != nil {
			return RecentConversation{}, false, nil, fmt.Errorf("read last conversation of %s: %w", snd, err)
		}
		switch kind {
		case 0:
			found, closed, out.ID, out.LastAt = true, isClosed, id, time.UnixMicro(last)
		case 1:
			out.History = append(out.History, turn.HistoryMessage{Role: role, Text: text, Turn: tn})
		default:
			applied = append(applied, tn)
		}
	}
	if err := rows.Err(); err != nil {
		return RecentConversation{}, false, nil, fmt.Errorf("read last conversation of %s: %w", snd, err)
	}
	slices.Reverse(out.History)
	pending = slices.DeleteFunc(pending, func(x exchanges.Exchange) bool { return slices.Contains(applied, x.Turn) })
	out, found, closed = withExchanges(out, found, closed, limit, pending)
	if !found || closed {
		return RecentConversation{}, false, applied, nil
	}
	return out, true, applied, nil
}

// recentConversationSQL reads the chat's latest conversation (kind 0),
// its last messages read backwards along (conversation_id, at) and
// stopped at the limit (kind 1: a join sorted afterwards would sort every
// message of a long conversation), and which of n pending turns' replies
// it holds (kind 2).
func recentConversationSQL(n int) string {
	q := `WITH c AS (SELECT id, last_at, closed_at IS NOT NULL AS closed FROM conversations
			WHERE sender = $1 AND project = $2 ORDER BY last_at DESC LIMIT 1)
		SELECT 0, c.id, c.last_at, c.closed, '', '', '', 0 FROM c
		UNION ALL
		SELECT 1, '', 0, false, m.role, m.text, m.turn_id, m.at FROM (SELECT role, text, turn_id, at FROM messages
			WHERE conversation_id = (SELECT id FROM c) ORDER BY at DESC, role ASC LIMIT $3) m`
	if n > 0 {
		marks := make([]string, n)
		for i := range marks {
			marks[i] = fmt.Sprintf("$%d", i+4)
		}
		q += `
		UNION ALL
		SELECT 2, '', 0, false, '', '', m.turn_id, 0 FROM messages m
			WHERE m.role = 'assistant' AND m.turn_id IN (` + strings.Join(marks, ", ") + `)`
	}
	return q + `
		ORDER BY 1, 8 DESC, 5 ASC`
}

func recentConversationArgs(snd, project string, limit int, pending []exchanges.Exchange) []any {
	args := []any{snd, project, max(limit, 0)}
	for _, x := range pending {
		args = append(args, x.Turn)
	}
	return args
}

// withExchanges adds to the conversation the read model shows (found, and
// closed) the exchanges whose replies it does not show yet, as the turns
// read model will: an exchange in another conversation than the latest
// one started that conversation (a turn only starts a new one), a user's
// message it shows already is not added again (the read model applied the
// turn's context, not its reply yet), and the history keeps the last limit
// messages.
func withExchanges(out RecentConversation, found, closed bool, limit int, pending []exchanges.Exchange) (RecentConversation, bool, bool) {
	for _, x := range pending {
		if !found || x.Conversation != out.ID {
			out, found, closed = RecentConversation{ID: x.Conversation}, true, false
		}
		if at := time.UnixMicro(x.LastAt()); at.After(out.LastAt) {
			out.LastAt = at
		}
		if limit <= 0 {
			continue
		}
		asked := slices.ContainsFunc(out.History, func(m turn.HistoryMessage) bool { return m.Turn == x.Turn && m.Role == "user" })
		if !asked {
			out.History = append(out.History, turn.HistoryMessage{Role: "user", Text: x.User, Turn: x.Turn})
		}
		out.History = append(out.History, turn.HistoryMessage{Role: "assistant", Text: x.Reply, Turn: x.Turn})
	}
	if limit > 0 && len(out.History) > limit {
		out.History = out.History[len(out.History)-limit:]
	}
	return out, found, closed
}
