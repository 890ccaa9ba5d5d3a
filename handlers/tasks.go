package handlers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// TaskRow is one task as the tasks read model holds it.
type TaskRow struct {
	ID, Description, Repeat, Kind, Project, Status string
	Due                                            time.Time
}

// ShortID is the id prefix shown to users and accepted by /cancel.
func (t TaskRow) ShortID() string { return ShortTaskID(t.ID) }

// ShortTaskID returns the first eight characters of a task id.
func ShortTaskID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// SenderTasks returns a sender's tasks ordered by due time; pendingOnly
// leaves out cancelled ones.
func (r ReadModel) SenderTasks(ctx context.Context, sender string, pendingOnly bool) ([]TaskRow, error) {
	q := `SELECT id, description, repeat, kind, project, status, due_at FROM tasks WHERE sender = $1`
	if pendingOnly {
		q += ` AND status = 'pending'`
	}
	rows, err := r.DB.QueryContext(ctx, q+` ORDER BY due_at, id`, sender)
	if err != nil {
		return nil, fmt.Errorf("read tasks of %s: %w", sender, err)
	}
	defer rows.Close()
	var out []TaskRow
	for rows.Next() {
		var t TaskRow
		var due int64
		if err := rows.Scan(&t.ID, &t.Description, &t.Repeat, &t.Kind, &t.Project, &t.Status, &due); err != nil {
			return nil, fmt.Errorf("read tasks of %s: %w", sender, err)
		}
		t.Due = time.UnixMicro(due).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}

// matchTasks picks the tasks whose id starts with prefix, preferring
// pending ones: a prefix that once named a task keeps naming it.
func matchTasks(all []TaskRow, prefix string) []TaskRow {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if prefix == "" {
		return nil
	}
	var pending, any []TaskRow
	for _, t := range all {
		if !strings.HasPrefix(strings.ToLower(t.ID), prefix) {
			continue
		}
		any = append(any, t)
		if t.Status == domain.TaskStatusPending {
			pending = append(pending, t)
		}
	}
	if len(pending) > 0 {
		return pending
	}
	return any
}
