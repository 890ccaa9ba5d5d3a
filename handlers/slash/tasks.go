package slash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/projections"
)

func (c *Commands) tasks(ctx context.Context, call *cmdCall) (string, error) {
	all, err := c.Read().SenderTasks(ctx, call.sender, false)
	if err != nil {
		return "", err
	}
	loc := cmp.Or(c.Location, time.UTC)
	if l, err := time.LoadLocation(call.profile.Facts["timezone"]); err == nil && call.profile.Facts["timezone"] != "" {
		loc = l
	}
	var lines []string
	for _, t := range all {
		if state, ok := taskState(call.lang, t, time.Now()); ok {
			lines = append(lines, fmt.Sprintf("- [%s] %s — %s (%s, %s) · %s", t.ShortID(), t.Description,
				i18n.TaskText(call.lang, i18n.TaskNextDue, t.Due.In(loc).Format("Mon 2 Jan 2006 15:04 MST")), t.Repeat, t.Kind, state))
		}
	}
	if len(lines) == 0 {
		return i18n.Text(call.lang, i18n.NoTasks), nil
	}
	return i18n.More(call.lang, i18n.TasksList, strings.Join(lines, "\n")), nil
}

// taskState is how /tasks describes a task: pending, late (due and not
// yet fired) or failed with its reason; cancelled and done ones are not
// listed.
func taskState(lang string, t projections.TaskRow, now time.Time) (string, bool) {
	switch {
	case t.Status == task.TaskStatusFailed:
		return i18n.TaskText(lang, i18n.TaskStateFailed, t.LastError), true
	case t.Status != task.TaskStatusPending:
		return "", false
	case t.Due.Before(now):
		return i18n.TaskText(lang, i18n.TaskStateLate), true
	case t.LastError != "":
		return i18n.TaskText(lang, i18n.TaskStatePend) + " (" + i18n.TaskText(lang, i18n.TaskStateFailed, t.LastError) + ")", true
	}
	return i18n.TaskText(lang, i18n.TaskStatePend), true
}

func (c *Commands) cancel(ctx context.Context, call *cmdCall, prefix string) (string, error) {
	if prefix == "" {
		return i18n.More(call.lang, i18n.CancelUsage), nil
	}
	row, found, err := c.FindTask(ctx, call.sender, prefix)
	switch {
	case err != nil:
		return "", err
	case found == effects.TaskAmbiguous:
		return i18n.More(call.lang, i18n.CancelAmbiguous, prefix), nil
	case found == effects.TaskMissing:
		return i18n.Text(call.lang, i18n.TaskNotFound, prefix), nil
	}
	tk, err := c.CancelTask(ctx, call.md, row.ID, "command")
	if errors.Is(err, task.ErrTaskNotPending) {
		return i18n.Text(call.lang, i18n.TaskNotFound, prefix), nil
	}
	if err != nil {
		return "", err
	}
	return i18n.Text(call.lang, i18n.TaskCancelled, tk.Description), nil
}
