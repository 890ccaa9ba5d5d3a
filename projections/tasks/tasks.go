// Package tasks is the read model of scheduled tasks.
package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ReadModel is the read model of scheduled tasks: what /tasks lists, what
// /cancel resolves id prefixes against and what the task confirmation
// compares new tasks with.
type ReadModel struct{}

func (ReadModel) Name() string { return "tasks" }

// Version 2 bounded sender keys (see sender.SenderKey); 3 added the firing columns.
func (ReadModel) Version() int     { return 3 }
func (ReadModel) Tables() []string { return []string{"tasks"} }

func (ReadModel) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id          TEXT PRIMARY KEY,
			sender      TEXT NOT NULL,
			channel     TEXT NOT NULL,
			sender_id   TEXT NOT NULL,
			chat_id     TEXT NOT NULL,
			description TEXT NOT NULL,
			due_at      BIGINT NOT NULL,
			repeat      TEXT NOT NULL,
			kind        TEXT NOT NULL,
			project     TEXT NOT NULL DEFAULT '',
			status      TEXT NOT NULL,
			turn_id     TEXT NOT NULL DEFAULT '',
			fired       INTEGER NOT NULL DEFAULT 0,
			firing      INTEGER NOT NULL DEFAULT 0,
			firing_due  BIGINT NOT NULL DEFAULT 0,
			last_error  TEXT NOT NULL DEFAULT '',
			created_at  BIGINT NOT NULL,
			updated_at  BIGINT NOT NULL
		)`, t("tasks")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (sender, status, due_at)`, t("tasks_by_sender"), t("tasks")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (status, due_at)`, t("tasks_due"), t("tasks")),
	}
}

func (ReadModel) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	if !strings.HasPrefix(e.StreamID, "task-") {
		return nil
	}
	switch e.Type {
	case task.TaskScheduled{}.EventType(), task.TaskCancelled{}.EventType(), task.TaskUpdated{}.EventType(),
		"TaskFired", "TaskDueAdvanced", "TaskDelivered", "TaskDeliveryFailed", "TaskActionStarted":
	default:
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	at := e.RecordedAt.UnixMicro()
	q, args := taskChange(p, at)
	if q == "" {
		q, args = firingChange(p, at)
	}
	if q == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(q, tx.T("tasks")), args...); err != nil {
		return fmt.Errorf("tasks: apply %s of %s: %w", e.Type, e.StreamID, err)
	}
	return nil
}

// taskChange is the statement (table name left as %s) recording a task
// being scheduled, changed or cancelled.
func taskChange(p domain.Payload, at int64) (string, []any) {
	switch ev := p.(type) {
	case task.TaskScheduled:
		return `INSERT INTO %s (id, sender, channel, sender_id, chat_id, description, due_at, repeat, kind, project, status, turn_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) ON CONFLICT (id) DO NOTHING`,
			[]any{ev.ID, sender.SenderKey(ev.Channel, ev.SenderID), ev.Channel, ev.SenderID, ev.ChatID, ev.Description,
				ev.Due.UnixMicro(), ev.Repeat, ev.Kind, ev.Project, task.TaskStatusPending, ev.TurnID, at}
	case task.TaskCancelled:
		return `UPDATE %s SET status = $2, updated_at = $3 WHERE id = $1`, []any{ev.ID, task.TaskStatusCancelled, at}
	case task.TaskUpdated:
		var due any
		if !ev.Due.IsZero() {
			due = ev.Due.UnixMicro()
		}
		return `UPDATE %s SET description = COALESCE(NULLIF($2, ''), description), due_at = COALESCE($3, due_at),
			repeat = COALESCE(NULLIF($4, ''), repeat), updated_at = $5 WHERE id = $1`, []any{ev.ID, ev.Description, due, ev.Repeat, at}
	}
	return "", nil
}

// firingChange keeps the firing columns: what is in flight, where a
// series goes next, how the last delivery ended.
func firingChange(p domain.Payload, at int64) (string, []any) {
	switch ev := p.(type) {
	case task.TaskFired:
		return `UPDATE %s SET fired = $2, firing = $2, firing_due = $3,
			status = CASE WHEN repeat IN ('daily', 'weekly', 'monthly', 'weekdays') THEN status ELSE 'done' END, updated_at = $4 WHERE id = $1`,
			[]any{ev.ID, ev.Occurrence, ev.Due.UnixMicro(), at}
	case task.TaskDueAdvanced:
		return `UPDATE %s SET due_at = $2, updated_at = $3 WHERE id = $1`, []any{ev.ID, ev.Due.UnixMicro(), at}
	case task.TaskDelivered:
		return `UPDATE %s SET firing = 0, firing_due = 0, last_error = '', updated_at = $2 WHERE id = $1`, []any{ev.ID, at}
	case task.TaskActionStarted:
		return `UPDATE %s SET firing = 0, firing_due = 0, last_error = '', updated_at = $2 WHERE id = $1`, []any{ev.ID, at}
	case task.TaskDeliveryFailed:
		if !ev.Final {
			return `UPDATE %s SET last_error = $2, updated_at = $3 WHERE id = $1`, []any{ev.ID, ev.Error, at}
		}
		return `UPDATE %s SET firing = 0, firing_due = 0, last_error = $2,
			status = CASE WHEN status = 'done' THEN 'failed' ELSE status END, updated_at = $3 WHERE id = $1`, []any{ev.ID, ev.Error, at}
	}
	return "", nil
}
