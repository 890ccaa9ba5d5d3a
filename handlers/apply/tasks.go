package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/handlers/effects"
)

func applySchedule(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, s markers.Schedule) (domain.AppliedMarker, error) {
	m := run.turn.Received
	kind, key := domain.TaskKindReminder, i18n.TaskScheduled
	if s.Action {
		kind, key = domain.TaskKindAction, i18n.ActionScheduled
	}
	id := effects.TaskID(md.CausationID)
	existing, err := h.Read().SenderTasks(ctx, run.sender, true)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	task, err := h.ScheduleTask(ctx, md, domain.TaskScheduled{ID: id, Description: s.Description, Due: s.Due.UTC(), Repeat: string(s.Repeat),
		Kind: kind, Project: run.project, Channel: m.Channel, SenderID: m.SenderID, ChatID: m.ChatID, IsGroup: m.IsGroup, TurnID: run.turn.ID})
	if errors.Is(err, domain.ErrTaskInvalid) {
		return domain.AppliedMarker{Effect: "rejected: " + err.Error()}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	// The confirmation quotes the recorded task, not the marker: what the
	// user reads is what will happen.
	run.confirm = append(run.confirm, i18n.Text(run.lang, key, task.Description, h.when(task.Due)))
	for _, e := range existing {
		if e.ID != id && domain.SimilarTasks(e.Description, e.Due, task.Description, task.Due) {
			run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskSimilarExists, fmt.Sprintf("%s — %s [%s]", e.Description, h.when(e.Due), e.ShortID())))
		}
	}
	return domain.AppliedMarker{Effect: fmt.Sprintf("%s %s scheduled for %s", kind, domain.ShortTaskID(id), task.Due.Format(time.RFC3339)), Stream: domain.TaskStream(id)}, nil
}

func applyCancel(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.CancelTask) (domain.AppliedMarker, error) {
	prefix := v.IDPrefix
	row, found, err := h.FindTask(ctx, run.sender, prefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return domain.AppliedMarker{Effect: "no single task matches " + prefix}, nil
	}
	task, err := h.CancelTask(ctx, md, row.ID, "marker")
	if errors.Is(err, domain.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return domain.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: domain.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskCancelled, task.Description))
	return domain.AppliedMarker{Effect: "cancelled " + row.ShortID(), Stream: domain.TaskStream(row.ID)}, nil
}

func applyUpdate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, u markers.UpdateTask) (domain.AppliedMarker, error) {
	row, found, err := h.FindTask(ctx, run.sender, u.IDPrefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return domain.AppliedMarker{Effect: "no single task matches " + u.IDPrefix}, nil
	}
	due := u.Due
	if !due.IsZero() {
		due = due.UTC()
	}
	task, err := h.UpdateTask(ctx, md, domain.TaskUpdated{ID: row.ID, Description: u.Description, Due: due, Repeat: string(u.Repeat), TurnID: run.turn.ID})
	if errors.Is(err, domain.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return domain.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: domain.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskUpdated, fmt.Sprintf("%s — %s", task.Description, h.when(task.Due))))
	return domain.AppliedMarker{Effect: "updated " + row.ShortID(), Stream: domain.TaskStream(row.ID)}, nil
}
