package effects

import (
	"context"
	"errors"
	"strings"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/projections"
)

// CancelTask is the command cancelling a pending task by its full id.
type CancelTask struct {
	TaskID, Reason string
	Meta           domain.Metadata
}

func (CancelTask) CommandName() string { return "CancelTask" }

// HandleCancelTask handles the CancelTask command; a task that is not
// pending (any more) rejects it.
func (x Recorder) HandleCancelTask(ctx context.Context, c *CancelTask) error {
	_, err := x.CancelTask(ctx, c.Meta, c.TaskID, c.Reason)
	if errors.Is(err, task.ErrTaskNotPending) {
		return messaging.Reject(err)
	}
	return err
}

// CommandHandlers exposes the task commands to the command bus.
func (x Recorder) CommandHandlers() []cqrs.CommandHandler {
	return []cqrs.CommandHandler{cqrs.NewCommandHandler("CancelTask", x.HandleCancelTask)}
}

// matchTasks picks the tasks whose id starts with prefix, preferring
// pending ones: a prefix that once named a task keeps naming it.
func matchTasks(all []projections.TaskRow, prefix string) []projections.TaskRow {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if prefix == "" {
		return nil
	}
	var pending, any []projections.TaskRow
	for _, t := range all {
		if !strings.HasPrefix(strings.ToLower(t.ID), prefix) {
			continue
		}
		any = append(any, t)
		if t.Status == task.TaskStatusPending {
			pending = append(pending, t)
		}
	}
	if len(pending) > 0 {
		return pending
	}
	return any
}
