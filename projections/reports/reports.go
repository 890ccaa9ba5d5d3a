// Package reports is the read model of what the agent reported about
// itself (bug reports and limitations) and its one query, what
// `omega bugs` lists.
package reports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ReadModel is the read model of what the agent reported about itself: bug
// reports (BUG_REPORT) and limitations (LIMITATION), listed by `omega bugs`.
type ReadModel struct{}

func (ReadModel) Name() string     { return "reports" }
func (ReadModel) Tables() []string { return []string{"reports"} }
func (ReadModel) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			event_id    TEXT PRIMARY KEY,
			position    BIGINT NOT NULL,
			kind        TEXT NOT NULL,
			sender      TEXT NOT NULL,
			title       TEXT NOT NULL,
			text        TEXT NOT NULL,
			reported_at BIGINT NOT NULL
		)`, t("reports")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (reported_at)`, t("reports_by_time"), t("reports")),
	}
}

// Kinds of report.
const (
	Bug        = "bug"
	Limitation = "limitation"
)

func (ReadModel) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	bug, limitation := (learning.BugReported{}).EventType(), (learning.LimitationReported{}).EventType()
	if e.Type != bug && e.Type != limitation {
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	kind, title, text := Bug, "", ""
	switch v := p.(type) {
	case learning.BugReported:
		text = v.Description
	case learning.LimitationReported:
		kind, title, text = Limitation, v.Title, strings.TrimSpace(v.Description+"\n"+v.Plan)
	}
	sender := ""
	if e.Metadata.Channel != "" || e.Metadata.Sender != "" {
		sender = e.Metadata.Channel + ":" + e.Metadata.Sender
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (event_id, position, kind, sender, title, text, reported_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`, tx.T("reports")),
		e.ID.String(), e.Position, kind, sender, title, text, e.RecordedAt.UnixMicro()); err != nil {
		return fmt.Errorf("reports: apply %s: %w", e.Type, err)
	}
	return nil
}

// Report is one bug report or limitation.
type Report struct {
	Kind   string    `json:"kind"`
	Sender string    `json:"sender"` // channel:id of the conversation it came from
	Title  string    `json:"title,omitempty"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

// Queries reads the reports table.
type Queries struct{ db *sql.DB }

// NewQueries returns the reports' queries on db.
func NewQueries(db *sql.DB) (*Queries, error) {
	if db == nil {
		return nil, errors.New("reports: queries need a database")
	}
	return &Queries{db: db}, nil
}

// List returns the agent's bug reports and limitations, newest first.
func (q *Queries) List(ctx context.Context, limit int) ([]Report, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT kind, sender, title, text, reported_at FROM reports
		ORDER BY reported_at DESC, position DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read reports: %w", err)
	}
	defer rows.Close()
	var out []Report
	for rows.Next() {
		var r Report
		var at int64
		if err := rows.Scan(&r.Kind, &r.Sender, &r.Title, &r.Text, &at); err != nil {
			return nil, fmt.Errorf("read reports: %w", err)
		}
		r.At = time.UnixMicro(at).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read reports: %w", err)
	}
	return out, nil
}
