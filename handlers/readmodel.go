package handlers

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// ReadModel answers the questions the turn pipeline asks of the
// projections: which turns are open, and what was said before.
type ReadModel struct {
	DB *sql.DB
}

// OpenTurn is a turn that has not completed yet.
type OpenTurn struct {
	ID, Sender, Channel string
	Acked               bool
}

// OpenTurns returns the open turns of the given channels, grouped by sender
// in arrival order.
func (r ReadModel) OpenTurns(ctx context.Context, channels []string) ([]OpenTurn, error) {
	if len(channels) == 0 {
		return nil, nil
	}
	ph := make([]string, len(channels))
	args := make([]any, len(channels))
	for i, c := range channels {
		ph[i] = fmt.Sprintf("$%d", i+1)
		args[i] = c
	}
	q := `SELECT turn_id, sender, channel, acked FROM turns WHERE status = 'open' AND channel IN (` + strings.Join(ph, ", ") + `) ORDER BY sender, arrival`
	return r.openTurns(ctx, q, args...)
}

// SenderOpenTurns returns one sender's open turns in arrival order.
func (r ReadModel) SenderOpenTurns(ctx context.Context, sender string) ([]OpenTurn, error) {
	return r.openTurns(ctx, `SELECT turn_id, sender, channel, acked FROM turns WHERE status = 'open' AND sender = $1 ORDER BY arrival`, sender)
}

func (r ReadModel) openTurns(ctx context.Context, q string, args ...any) ([]OpenTurn, error) {
	rows, err := r.DB.QueryContext(ctx, q, args...)
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

// LastConversation returns a sender's most recent conversation in a
// project and when it was last active; none if that conversation was
// closed on purpose (forget), so the next message starts a new one.
func (r ReadModel) LastConversation(ctx context.Context, sender, project string) (string, time.Time, bool, error) {
	var id string
	var last int64
	var closed bool
	err := r.DB.QueryRowContext(ctx, `SELECT id, last_at, closed_at IS NOT NULL FROM conversations
		WHERE sender = $1 AND project = $2 ORDER BY last_at DESC LIMIT 1`, sender, project).Scan(&id, &last, &closed)
	if errors.Is(err, sql.ErrNoRows) || closed {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("read last conversation of %s: %w", sender, err)
	}
	return id, time.UnixMicro(last), true, nil
}

// History returns the last limit messages of a conversation, oldest first.
func (r ReadModel) History(ctx context.Context, conversationID string, limit int) ([]domain.HistoryMessage, error) {
	rows, err := r.DB.QueryContext(ctx, `SELECT role, text FROM messages WHERE conversation_id = $1 ORDER BY at DESC, role ASC LIMIT $2`, conversationID, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", conversationID, err)
	}
	defer rows.Close()
	var out []domain.HistoryMessage
	for rows.Next() {
		var m domain.HistoryMessage
		if err := rows.Scan(&m.Role, &m.Text); err != nil {
			return nil, fmt.Errorf("read history of %s: %w", conversationID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
