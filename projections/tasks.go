package projections

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
)

// Tasks is the read model of scheduled tasks: what /tasks lists, what
// /cancel resolves id prefixes against and what the task confirmation
// compares new tasks with.
type Tasks struct{}

func (Tasks) Name() string     { return "tasks" }
func (Tasks) Tables() []string { return []string{"tasks"} }

func (Tasks) Schema(_ Dialect, t func(string) string) []string {
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
			created_at  BIGINT NOT NULL,
			updated_at  BIGINT NOT NULL
		)`, t("tasks")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (sender, status, due_at)`, t("tasks_by_sender"), t("tasks")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (status, due_at)`, t("tasks_due"), t("tasks")),
	}
}

func (Tasks) Apply(ctx context.Context, tx *Tx, e domain.Event) error {
	if !strings.HasPrefix(e.StreamID, "task-") {
		return nil
	}
	switch e.Type {
	case "TaskScheduled", "TaskCancelled", "TaskUpdated":
	default:
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	at := e.RecordedAt.UnixMicro()
	var q string
	var args []any
	switch ev := p.(type) {
	case domain.TaskScheduled:
		q = fmt.Sprintf(`INSERT INTO %s (id, sender, channel, sender_id, chat_id, description, due_at, repeat, kind, project, status, turn_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) ON CONFLICT (id) DO NOTHING`, tx.T("tasks"))
		args = []any{ev.ID, SenderKey(ev.Channel, ev.SenderID), ev.Channel, ev.SenderID, ev.ChatID, ev.Description,
			ev.Due.UnixMicro(), ev.Repeat, ev.Kind, ev.Project, domain.TaskStatusPending, ev.TurnID, at}
	case domain.TaskCancelled:
		q = fmt.Sprintf(`UPDATE %s SET status = $2, updated_at = $3 WHERE id = $1`, tx.T("tasks"))
		args = []any{ev.ID, domain.TaskStatusCancelled, at}
	case domain.TaskUpdated:
		var due any
		if !ev.Due.IsZero() {
			due = ev.Due.UnixMicro()
		}
		q = fmt.Sprintf(`UPDATE %s SET description = COALESCE(NULLIF($2, ''), description), due_at = COALESCE($3, due_at),
			repeat = COALESCE(NULLIF($4, ''), repeat), updated_at = $5 WHERE id = $1`, tx.T("tasks"))
		args = []any{ev.ID, ev.Description, due, ev.Repeat, at}
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("tasks: apply %s of %s: %w", e.Type, e.StreamID, err)
	}
	return nil
}
