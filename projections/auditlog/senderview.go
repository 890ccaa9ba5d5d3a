package auditlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SenderView is what the read models know about one sender.
type SenderView struct {
	Key         string
	Channel     string
	SenderID    string
	Name        string
	Language    string
	Personality string
	Known       bool // the sender has a profile
	Facts       []SenderFact
	Tasks       []SenderTask
	Sessions    []SenderSession
}

// SenderFact is one remembered fact.
type SenderFact struct {
	Key, Value, Source string
	UpdatedAt          time.Time
}

// SenderTask is one scheduled task of the sender that has not finished.
type SenderTask struct {
	ID, Description, Repeat, Kind, Project, Status string
	Due                                            time.Time
}

// SenderSession is one provider session the sender's turns resume.
type SenderSession struct {
	Project, SessionID, Provider string
	UpdatedAt                    time.Time
}

// Sender returns the view of the sender with read-model key key.
func (a *Queries) Sender(ctx context.Context, key string) (SenderView, error) {
	v := SenderView{Key: key}
	err := a.db.QueryRowContext(ctx, `SELECT channel, sender_id, name, language, personality FROM senders WHERE sender = $1`, key).
		Scan(&v.Channel, &v.SenderID, &v.Name, &v.Language, &v.Personality)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return v, fmt.Errorf("read sender %s: %w", key, err)
	default:
		v.Known = true
	}
	if err := a.each(ctx, `SELECT key, value, source, updated_at FROM facts WHERE sender = $1 ORDER BY key`, key, func(r *sql.Rows) error {
		var f SenderFact
		var at int64
		err := r.Scan(&f.Key, &f.Value, &f.Source, &at)
		f.UpdatedAt = time.UnixMicro(at).UTC()
		v.Facts = append(v.Facts, f)
		return err
	}); err != nil {
		return v, err
	}
	if err := a.each(ctx, `SELECT id, description, repeat, kind, project, status, due_at FROM tasks
		WHERE sender = $1 AND status = 'pending' ORDER BY due_at`, key, func(r *sql.Rows) error {
		var t SenderTask
		var due int64
		err := r.Scan(&t.ID, &t.Description, &t.Repeat, &t.Kind, &t.Project, &t.Status, &due)
		t.Due = time.UnixMicro(due).UTC()
		v.Tasks = append(v.Tasks, t)
		return err
	}); err != nil {
		return v, err
	}
	err = a.each(ctx, `SELECT project, session_id, provider, updated_at FROM provider_sessions WHERE sender = $1 ORDER BY project`, key, func(r *sql.Rows) error {
		var s SenderSession
		var at int64
		err := r.Scan(&s.Project, &s.SessionID, &s.Provider, &at)
		s.UpdatedAt = time.UnixMicro(at).UTC()
		v.Sessions = append(v.Sessions, s)
		return err
	})
	return v, err
}

func (a *Queries) each(ctx context.Context, q, arg string, scan func(*sql.Rows) error) error {
	rows, err := a.db.QueryContext(ctx, q, arg)
	if err != nil {
		return fmt.Errorf("sender view: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("sender view: %w", err)
		}
	}
	return rows.Err()
}

// TurnsOf lists the sender's turns in arrival order, only those of
// conversation when it is not empty.
func (a *Queries) TurnsOf(ctx context.Context, sender, conversation string) ([]string, error) {
	q, args := `SELECT turn_id FROM turns WHERE sender = $1 ORDER BY arrival`, []any{sender}
	if conversation != "" {
		q, args = `SELECT turn_id FROM turns WHERE sender = $1 AND conversation_id = $2 ORDER BY arrival`, []any{sender, conversation}
	}
	rows, err := a.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("turns of %s: %w", sender, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("turns of %s: %w", sender, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
