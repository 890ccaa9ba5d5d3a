package task

import (
	"errors"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Task statuses after firing: a one-off task is done once fired and
// failed when its delivery failed for good.
const (
	TaskStatusDone   = "done"
	TaskStatusFailed = "failed"
)

// MaxDeliveryAttempts bounds how often one occurrence's delivery (or an
// action's run) is tried before it is recorded as failed.
const MaxDeliveryAttempts = 3

// Firing events: the claim of an occurrence (intent), each delivery
// attempt (intent) and its outcome, and where a series goes next.
type (
	// TaskFired claims one occurrence. It is appended with the version the
	// firer read, so of several processes exactly one records it.
	TaskFired struct {
		ID         string    `json:"id"`
		Occurrence int       `json:"occurrence"`
		Due        time.Time `json:"due"`
		FiredAt    time.Time `json:"fired_at"`
		Late       bool      `json:"late,omitempty"` // fired well after its due time (omega was down)
	}
	// TaskDueAdvanced moves a recurring task to its next occurrence.
	TaskDueAdvanced struct {
		ID  string    `json:"id"`
		Due time.Time `json:"due"`
	}
	// TaskDeliveryStarted is recorded before a send; one without an
	// outcome after it means the process died around the send.
	TaskDeliveryStarted struct {
		ID         string `json:"id"`
		Occurrence int    `json:"occurrence"`
		Attempt    int    `json:"attempt"`
		// Owner is the stable node id of the process that sends: that
		// node, restarted, knows at once that the send was cut off.
		Owner string `json:"owner,omitempty"`
	}
	TaskDelivered struct {
		ID          string   `json:"id"`
		Occurrence  int      `json:"occurrence"`
		Attempt     int      `json:"attempt"`
		Text        string   `json:"text"`
		PlatformIDs []string `json:"platform_ids,omitempty"`
		// MaybeDuplicate: an earlier attempt was started and never settled,
		// so the user may have received this twice.
		MaybeDuplicate bool `json:"maybe_duplicate,omitempty"`
	}
	TaskDeliveryFailed struct {
		ID         string `json:"id"`
		Occurrence int    `json:"occurrence"`
		Attempt    int    `json:"attempt"`
		Class      string `json:"class"` // blocked, rejected, not_connected, no_channel, error
		Error      string `json:"error"`
		Final      bool   `json:"final,omitempty"` // no further attempt will be made
	}
	// TaskActionStarted: the action's turn exists; the driver takes it
	// from there.
	TaskActionStarted struct {
		ID         string `json:"id"`
		Occurrence int    `json:"occurrence"`
		TurnID     string `json:"turn_id"`
	}
)

func (TaskFired) EventType() string           { return "TaskFired" }
func (TaskDueAdvanced) EventType() string     { return "TaskDueAdvanced" }
func (TaskDeliveryStarted) EventType() string { return "TaskDeliveryStarted" }
func (TaskDelivered) EventType() string       { return "TaskDelivered" }
func (TaskDeliveryFailed) EventType() string  { return "TaskDeliveryFailed" }
func (TaskActionStarted) EventType() string   { return "TaskActionStarted" }

// TaskFiring is an occurrence fired and not yet settled.
type TaskFiring struct {
	Occurrence int
	Due        time.Time
	Late       bool
	Attempts   int    // delivery attempts started
	Open       bool   // the last attempt has no recorded outcome
	Owner      string // node that started the last attempt ("" before nodes were recorded)
}

// Firing decision errors.
var (
	ErrTaskNotDue   = errors.New("task is not due")
	ErrTaskInFlight = errors.New("an occurrence of the task is already in flight")
	ErrTaskSettled  = errors.New("no occurrence of the task is in flight")
)

func (t *Task) applyFiring(p domain.Payload) {
	switch e := p.(type) {
	case TaskFired:
		t.Fired = e.Occurrence
		t.Firing = &TaskFiring{Occurrence: e.Occurrence, Due: e.Due, Late: e.Late}
		if !Recurring(t.Repeat) {
			t.Status = TaskStatusDone
		}
	case TaskDueAdvanced:
		t.Due = e.Due
	case TaskDeliveryStarted:
		if t.Firing != nil {
			t.Firing.Attempts, t.Firing.Open, t.Firing.Owner = e.Attempt, true, e.Owner
		}
	case TaskDelivered, TaskActionStarted:
		t.Firing, t.LastError = nil, ""
	case TaskDeliveryFailed:
		t.LastError = e.Error
		if t.Firing != nil {
			t.Firing.Open = false
		}
		if e.Final {
			t.Firing = nil
			if t.Status == TaskStatusDone {
				t.Status = TaskStatusFailed
			}
		}
	}
}

// NextDue is when the task next needs the clock: at once while an
// occurrence is in flight (a crash left it unsettled), at its due time
// while pending, never otherwise.
func (t Task) NextDue() (time.Time, bool) {
	switch {
	case t.Firing != nil:
		return t.Firing.Due, true
	case t.Status == TaskStatusPending:
		return t.Due, true
	}
	return time.Time{}, false
}

// Fire decides the firing of the occurrence due now: the claim and, for a
// series, the move to its first occurrence after now computed in loc (so
// missed occurrences fire once, not once each). An occurrence fired more
// than lateAfter past its due time is marked late.
func (t Task) Fire(now time.Time, loc *time.Location, lateAfter time.Duration) ([]domain.Payload, error) {
	switch {
	case t.Firing != nil:
		return nil, ErrTaskInFlight
	case t.Status != TaskStatusPending:
		return nil, ErrTaskNotPending
	case t.Due.After(now):
		return nil, ErrTaskNotDue
	}
	out := []domain.Payload{TaskFired{ID: t.ID, Occurrence: t.Fired + 1, Due: t.Due, FiredAt: now.UTC(), Late: now.Sub(t.Due) > lateAfter}}
	if next, ok := NextOccurrence(t.Repeat, t.Anchor, now, loc); ok {
		out = append(out, TaskDueAdvanced{ID: t.ID, Due: next.UTC()})
	}
	return out, nil
}

// StartDelivery decides the next delivery attempt of the occurrence in
// flight. It reports whether an earlier attempt was left unsettled.
func (t Task) StartDelivery() (TaskDeliveryStarted, bool, error) {
	if t.Firing == nil {
		return TaskDeliveryStarted{}, false, ErrTaskSettled
	}
	return TaskDeliveryStarted{ID: t.ID, Occurrence: t.Firing.Occurrence, Attempt: t.Firing.Attempts + 1}, t.Firing.Open, nil
}
