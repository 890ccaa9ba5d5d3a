package turn

import "github.com/omega-gateway/omega/domain/task"

// Step is the next thing a turn needs done.
type Step int

const (
	StepNone Step = iota // nothing: completed, or no message
	StepAuthorize
	StepWelcome
	StepCommand
	StepBuildContext
	StepCallProvider
	StepProcessReply
	StepSendReply
	StepCleanup
	StepComplete
	StepClassify     // decide between a direct answer and a plan
	StepPlanProgress // announce the plan, or apply a step's markers and report it
	StepPlanStep     // run the next plan step
	StepPlanSummary  // make the plan's final reply
	StepSendImages   // find, then send one by one, the workspace images the turn made
)

var stepNames = [...]string{"none", "authorize", "welcome", "command", "build_context", "call_provider", "process_reply", "send_reply", "cleanup", "complete",
	"classify", "plan_progress", "plan_step", "plan_summary", "send_images"}

func (s Step) String() string { return stepNames[s] }

// TurnEnv is what the next step depends on beyond the turn's own stream.
type TurnEnv struct {
	SenderWelcomed bool // the sender stream already records Welcomed
	IsCommand      bool // the message is a bot command
	Classify       bool // route through a classification call
}

// ActionRetry reports whether a scheduled action whose provider call
// failed gets another call: up to MaxDeliveryAttempts in all, after which
// the failure is reported to the user like any other. A call a spending
// limit refused is not tried again: the limit stays spent until it resets.
func (t *Turn) ActionRetry() bool {
	return t.Received != nil && t.Received.Task != nil && t.Failure != nil && t.Calls < task.MaxDeliveryAttempts &&
		t.Failure.Class != ClassOverBudget
}

// Next decides the single next step of a turn.
func (t *Turn) Next(env TurnEnv) Step {
	if step, ok := t.nextAccess(env); ok {
		return step
	}
	switch {
	case env.IsCommand && t.Context == nil:
		if t.Command == nil {
			return StepCommand
		}
		return t.finish()
	case t.Context == nil:
		return StepBuildContext
	case env.Classify && t.unrouted():
		// Only a turn that has not called the provider yet is classified,
		// so a turn recorded before classification was on resumes as it was.
		return StepClassify
	case t.Plan():
		return t.nextInPlan()
	case t.Reply == nil && t.mayCall():
		return StepCallProvider
	case t.Reply != nil && t.Ready == nil && !t.Suppressed:
		return StepProcessReply
	default:
		return t.finish()
	}
}

// unrouted reports a turn neither classified nor sent to the provider.
func (t *Turn) unrouted() bool {
	return t.Route == nil && t.Calls == 0 && t.Reply == nil && t.Failure == nil
}

// mayCall reports whether the provider may be called (again): never
// called, or a failure that asks for another call.
func (t *Turn) mayCall() bool {
	return t.Failure == nil || t.Failure.RetryFullContext || t.ActionRetry()
}

// nextAccess decides the steps that come before anything else: nothing
// for a finished turn, then access, then the first contact's welcome;
// false when none of them is due.
func (t *Turn) nextAccess(env TurnEnv) (Step, bool) {
	switch {
	case t.Received == nil || t.Completed != nil:
		return StepNone, true
	case !t.Granted && !t.Denied:
		return StepAuthorize, true
	case t.Denied:
		return t.finish(), true
	case !t.WelcomeSent && !env.SenderWelcomed && !t.Received.IsGroup:
		return StepWelcome, true
	}
	return StepNone, false
}

// nextInPlan walks a plan: announce, then for each step run it and report
// it, then summarise. Every step's outcome is on record, so a resumed turn
// starts at the first step without one.
func (t *Turn) nextInPlan() Step {
	switch {
	case t.Ready != nil:
		return t.finish()
	case t.PlanStopped():
		return StepPlanSummary
	case t.Progressed <= len(t.StepsDone):
		return StepPlanProgress
	case len(t.StepsDone) < len(t.Route.Steps):
		return StepPlanStep
	default:
		return StepPlanSummary
	}
}

// finish sends what is to be sent, cleans up and completes.
func (t *Turn) finish() Step {
	if t.Sent == nil && t.SendFailed == nil && !t.Suppressed {
		return StepSendReply
	}
	if t.imagesDue() {
		return StepSendImages
	}
	if len(t.Received.Attachments) > 0 && !t.Cleaned {
		return StepCleanup
	}
	return StepComplete
}

// Outcome is the status a finished turn completes with.
func (t *Turn) Outcome() string {
	switch {
	case t.Denied:
		return StatusDenied
	case t.Suppressed:
		return StatusSuppressed
	case t.SendFailed != nil, len(t.Images.Undelivered) > 0:
		return StatusUndelivered
	case t.Command != nil:
		return StatusCommand
	case t.Plan():
		if t.PlanComplete() {
			return StatusOK
		}
		return StatusError
	case t.Reply == nil:
		return StatusError
	default:
		return StatusOK
	}
}

// ReplyKind names what the send step delivers.
func (t *Turn) ReplyKind() string {
	switch {
	case t.Denied:
		return "deny"
	case t.Command != nil && t.Context == nil:
		return "command"
	case t.Plan():
		if t.PlanComplete() {
			return "reply"
		}
		return "error"
	case t.Reply == nil:
		return "error"
	default:
		return "reply"
	}
}
