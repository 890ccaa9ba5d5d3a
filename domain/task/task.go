package task

import (
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/omega-gateway/omega/domain"
)

// TaskStream names the stream of one scheduled task.
func TaskStream(id string) string { return "task-" + id }

// ShortTaskID returns the id prefix shown to users and accepted by
// /cancel: the first eight characters.
func ShortTaskID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Task kinds: a reminder is delivered to the user, an action is executed
// by the agent itself when due.
const (
	TaskKindReminder = "reminder"
	TaskKindAction   = "action"
)

// Task statuses.
const (
	TaskStatusPending   = "pending"
	TaskStatusCancelled = "cancelled"
)

// Task events.
type (
	TaskScheduled struct {
		ID          string    `json:"id"`
		Description string    `json:"description"`
		Due         time.Time `json:"due"`
		Repeat      string    `json:"repeat"`
		Kind        string    `json:"kind"`
		Project     string    `json:"project,omitempty"`
		Channel     string    `json:"channel"`
		SenderID    string    `json:"sender_id"`
		ChatID      string    `json:"chat_id"`
		// IsGroup: ChatID is a group chat, whose conversation an action
		// runs in (see MessageReceived.Chat).
		IsGroup bool   `json:"is_group,omitempty"`
		TurnID  string `json:"turn_id,omitempty"`
	}
	TaskCancelled struct {
		ID     string `json:"id"`
		TurnID string `json:"turn_id,omitempty"`
		Reason string `json:"reason,omitempty"` // "marker", "command"
	}
	// TaskUpdated changes the non-empty fields; a zero Due keeps the old one.
	TaskUpdated struct {
		ID          string    `json:"id"`
		Description string    `json:"description,omitempty"`
		Due         time.Time `json:"due,omitzero"`
		Repeat      string    `json:"repeat,omitempty"`
		TurnID      string    `json:"turn_id,omitempty"`
	}
)

func (TaskScheduled) EventType() string { return "TaskScheduled" }
func (TaskCancelled) EventType() string { return "TaskCancelled" }
func (TaskUpdated) EventType() string   { return "TaskUpdated" }

// RegisterTaskEvents adds the task events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{TaskScheduled{}, TaskCancelled{}, TaskUpdated{}, TaskFired{}, TaskDueAdvanced{},
		TaskDeliveryStarted{}, TaskDelivered{}, TaskDeliveryFailed{}, TaskActionStarted{}} {
		r.Register(p, 1)
	}
}

// Task decision errors.
var (
	ErrTaskExists     = errors.New("task already scheduled")
	ErrTaskNotPending = errors.New("task is not pending")
	ErrTaskInvalid    = errors.New("invalid task")
)

// Task is the state folded from a task stream.
type Task struct {
	Version int64
	TaskScheduled
	Status string // "" until scheduled
	// Anchor is the due time the series was set to (scheduled or updated);
	// recurrences are computed from it so a monthly 31st stays the 31st.
	Anchor time.Time
	// Firing is the occurrence fired and not yet settled (delivered, failed
	// for good, or its action turn started); nil when none is in flight.
	Firing *TaskFiring
	// Fired counts occurrences fired; LastError is the last failed
	// delivery's reason, "" once one succeeds.
	Fired     int
	LastError string
	// Changed is when the last event was recorded.
	Changed time.Time
}

// Apply folds one event into the task.
func (t *Task) Apply(p domain.Payload, version int64, at time.Time) {
	t.Version = version
	if !at.IsZero() {
		t.Changed = at
	}
	switch e := p.(type) {
	case TaskScheduled:
		t.TaskScheduled, t.Status, t.Anchor = e, TaskStatusPending, e.Due
	case TaskCancelled:
		t.Status = TaskStatusCancelled
	case TaskUpdated:
		if e.Description != "" {
			t.Description = e.Description
		}
		if !e.Due.IsZero() {
			t.Due, t.Anchor = e.Due, e.Due
		}
		if e.Repeat != "" {
			t.Repeat = e.Repeat
		}
	default:
		t.applyFiring(p)
	}
}

// Schedule decides the events for creating the task.
func (t Task) Schedule(s TaskScheduled) ([]domain.Payload, error) {
	if t.Status != "" {
		return nil, ErrTaskExists
	}
	s.Description = strings.TrimSpace(s.Description)
	switch {
	case s.ID == "" || s.Description == "" || s.Due.IsZero():
		return nil, ErrTaskInvalid
	case s.Kind != TaskKindReminder && s.Kind != TaskKindAction:
		return nil, ErrTaskInvalid
	}
	if s.Repeat == "" {
		s.Repeat = "once"
	}
	return []domain.Payload{s}, nil
}

// Cancel decides the events for cancelling the task.
func (t Task) Cancel(turnID, reason string) ([]domain.Payload, error) {
	if t.Status != TaskStatusPending {
		return nil, ErrTaskNotPending
	}
	return []domain.Payload{TaskCancelled{ID: t.ID, TurnID: turnID, Reason: reason}}, nil
}

// Update decides the events for changing the task; nothing when no field
// would change.
func (t Task) Update(u TaskUpdated) ([]domain.Payload, error) {
	if t.Status != TaskStatusPending {
		return nil, ErrTaskNotPending
	}
	u.ID = t.ID
	if u.Description == t.Description {
		u.Description = ""
	}
	if u.Due.Equal(t.Due) {
		u.Due = time.Time{}
	}
	if u.Repeat == t.Repeat {
		u.Repeat = ""
	}
	if u.Description == "" && u.Due.IsZero() && u.Repeat == "" {
		return nil, nil
	}
	return []domain.Payload{u}, nil
}

// DuplicateWindow is how close two due times must be for tasks to count
// as near-duplicates.
const DuplicateWindow = 30 * time.Minute

// SimilarTasks reports whether two tasks look like the same thing asked
// twice: due within DuplicateWindow of each other and with descriptions
// sharing most of their significant words. Providers often schedule the
// same reminder again when the user repeats themselves; the confirmation
// warns instead of silently keeping both.
func SimilarTasks(aDesc string, aDue time.Time, bDesc string, bDue time.Time) bool {
	diff := aDue.Sub(bDue)
	if diff < 0 {
		diff = -diff
	}
	if diff > DuplicateWindow {
		return false
	}
	a, b := significantWords(aDesc), significantWords(bDesc)
	if len(a) == 0 || len(b) == 0 {
		return strings.EqualFold(strings.TrimSpace(aDesc), strings.TrimSpace(bDesc))
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	smaller := min(len(a), len(b))
	return shared*2 >= smaller+1 || shared == smaller
}

// significantWords returns the lower-cased words of at least three
// letters: short words ("to", "a", "at") say little about what a task is.
func significantWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) >= 3 {
			out[w] = true
		}
	}
	return out
}
