package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/handlers/effects"
)

func applySchedule(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, s markers.Schedule) (markers.AppliedMarker, error) {
	m := run.turn.Received
	kind, key := task.TaskKindReminder, i18n.TaskScheduled
	if s.Action {
		kind, key = task.TaskKindAction, i18n.ActionScheduled
	}
	id := effects.TaskID(md.CausationID)
	existing, err := h.Read().SenderTasks(ctx, run.sender, true)
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	tk, err := h.ScheduleTask(ctx, md, task.TaskScheduled{ID: id, Description: s.Description, Due: s.Due.UTC(), Repeat: string(s.Repeat),
		Kind: kind, Project: run.project, Channel: m.Channel, SenderID: m.SenderID, ChatID: m.ChatID, IsGroup: m.IsGroup, TurnID: run.turn.ID})
	if errors.Is(err, task.ErrTaskInvalid) {
		return markers.AppliedMarker{Effect: "rejected: " + err.Error()}, nil
	}
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	// The confirmation quotes the recorded task, not the marker: what the
	// user reads is what will happen.
	run.confirm = append(run.confirm, i18n.Text(run.lang, key, tk.Description, h.when(tk.Due)))
	for _, e := range existing {
		if e.ID != id && task.SimilarTasks(e.Description, e.Due, tk.Description, tk.Due) {
			run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskSimilarExists, fmt.Sprintf("%s — %s [%s]", e.Description, h.when(e.Due), e.ShortID())))
		}
	}
	return markers.AppliedMarker{Effect: fmt.Sprintf("%s %s scheduled for %s", kind, task.ShortTaskID(id), tk.Due.Format(time.RFC3339)), Stream: task.TaskStream(id)}, nil
}

func applyCancel(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.CancelTask) (markers.AppliedMarker, error) {
	prefix := v.IDPrefix
	row, found, err := h.FindTask(ctx, run.sender, prefix)
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return markers.AppliedMarker{Effect: "no single task matches " + prefix}, nil
	}
	tk, err := h.CancelTask(ctx, md, row.ID, "marker")
	if errors.Is(err, task.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return markers.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: task.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskCancelled, tk.Description))
	return markers.AppliedMarker{Effect: "cancelled " + row.ShortID(), Stream: task.TaskStream(row.ID)}, nil
}

func applyUpdate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, u markers.UpdateTask) (markers.AppliedMarker, error) {
	row, found, err := h.FindTask(ctx, run.sender, u.IDPrefix)
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return markers.AppliedMarker{Effect: "no single task matches " + u.IDPrefix}, nil
	}
	due := u.Due
	if !due.IsZero() {
		due = due.UTC()
	}
	tk, err := h.UpdateTask(ctx, md, task.TaskUpdated{ID: row.ID, Description: u.Description, Due: due, Repeat: string(u.Repeat), TurnID: run.turn.ID})
	if errors.Is(err, task.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return markers.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: task.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskUpdated, fmt.Sprintf("%s — %s", tk.Description, h.when(tk.Due))))
	return markers.AppliedMarker{Effect: "updated " + row.ShortID(), Stream: task.TaskStream(row.ID)}, nil
}
