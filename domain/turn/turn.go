package turn

import (
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
)

// Turn statuses.
const (
	StatusOK          = "ok"
	StatusCommand     = "command"
	StatusDenied      = "denied"
	StatusError       = "error"
	StatusSuppressed  = "suppressed"
	StatusUndelivered = "undelivered"
)

// Turn is the state folded from a turn stream.
type Turn struct {
	ID string
	// Merged are the later turns this one answers (MessagesMerged);
	// MergedInto is the turn that answered this one's message.
	Merged     []string
	MergedInto string
	Version    int64
	Received   *MessageReceived
	StartedAt  time.Time

	Granted, Denied bool
	DenyReason      string
	DenyPairing     *access.PairingOffer // the pairing code the denial offered
	WelcomeSent     bool
	Acked           bool
	Command         *CommandAnswered
	Context         *ContextBuilt
	Calls           int // ProviderCalled count
	Reply           *ProviderReplied
	Failure         *ProviderFailed
	Ready           *ReplyReady
	Suppressed      bool
	Sent            *ReplySent
	SendFailed      *ReplyFailed
	Cleaned         bool
	Completed       *TurnCompleted

	Route *RouteDecided
	// StepsDone are the completed plan steps, in order.
	StepsDone []PlanStepCompleted
	// StepFailure is the last failed attempt of the step being run.
	StepFailure *PlanStepFailed
	// Progressed counts the plan messages sent: the announcement, then
	// one per completed step.
	Progressed int
	// StepReplies are the completed steps' replies as the user sees them.
	StepReplies []string

	Images TurnImages
	// Preview is the streamed reply's preview, if one showed.
	Preview TurnPreview
}

// MaxStepAttempts is how many times a plan step is tried before the plan
// stops.
const MaxStepAttempts = 3

// Plan reports whether the turn runs a multi-step plan.
func (t *Turn) Plan() bool {
	return t.Route != nil && !t.Route.Direct && len(t.Route.Steps) > 0
}

// PlanStopped reports whether a plan step failed too often to go on, or
// was refused by a spending limit: asking again before the limit resets
// is refused the same way.
func (t *Turn) PlanStopped() bool {
	f := t.StepFailure
	return f != nil && (f.Attempt >= MaxStepAttempts || f.Class == ClassOverBudget)
}

// PlanComplete reports whether every step of the plan completed.
func (t *Turn) PlanComplete() bool {
	return t.Plan() && len(t.StepsDone) == len(t.Route.Steps)
}

// NextStepIndex is the 1-based index of the plan step to run next.
func (t *Turn) NextStepIndex() int { return len(t.StepsDone) + 1 }

// NextAttempt is the attempt number the next run of the current step has.
func (t *Turn) NextAttempt() int {
	if t.StepFailure == nil {
		return 1
	}
	return t.StepFailure.Attempt + 1
}

// Apply folds one event into the turn.
func (t *Turn) Apply(p domain.Payload, version int64, at time.Time) {
	t.Version = version
	if !t.applyIntake(p, at) && !t.applyMerge(p) && !t.applyReply(p) && !t.applyImages(p) && !t.applyStream(p) {
		t.applyPlan(p)
	}
}

// applyIntake folds the events up to the provider call; false when p is
// not one of them.
func (t *Turn) applyIntake(p domain.Payload, at time.Time) bool {
	switch e := p.(type) {
	case MessageReceived:
		t.Received, t.StartedAt = &e, at
	case AccessGranted:
		t.Granted = true
	case AccessDenied:
		t.Denied, t.DenyReason, t.DenyPairing = true, e.Reason, e.Pairing
	case WelcomeSent:
		t.WelcomeSent = true
	case AckSent:
		t.Acked = true
	case CommandAnswered:
		t.Command = &e
	case ContextBuilt:
		t.Context = &e
	case RouteDecided:
		t.Route = &e
	default:
		return false
	}
	return true
}

// applyReply folds the events from the provider call to completion; false
// when p is not one of them.
func (t *Turn) applyReply(p domain.Payload) bool {
	switch e := p.(type) {
	case ProviderCalled:
		t.Calls++
	case ProviderReplied:
		t.Reply, t.Failure = &e, nil
	case ProviderFailed:
		t.Failure = &e
	case ReplyReady:
		t.Ready = &e
	case TurnSuppressed:
		t.Suppressed = true
	case ReplySent:
		if t.Ready != nil {
			e.Text = e.SentText(t.Ready.Text)
		}
		t.Sent = &e
	case ReplyFailed:
		t.SendFailed = &e
	case AttachmentsRemoved:
		t.Cleaned = true
	case TurnCompleted:
		t.Completed = &e
	default:
		return false
	}
	return true
}

// applyPlan folds the events of a multi-step plan.
func (t *Turn) applyPlan(p domain.Payload) {
	switch e := p.(type) {
	case PlanStepCompleted:
		// Only the step due counts: a duplicate record never skips a step.
		if e.Index == t.NextStepIndex() {
			t.StepsDone, t.StepFailure = append(t.StepsDone, e), nil
		}
	case PlanStepFailed:
		if e.Index == t.NextStepIndex() {
			t.StepFailure = &e
		}
	case PlanProgressSent:
		if e.Index == t.Progressed {
			t.Progressed++
			if e.Index > 0 {
				t.StepReplies = append(t.StepReplies, e.Reply)
			}
		}
	}
}
