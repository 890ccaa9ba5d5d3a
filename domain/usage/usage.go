package usage

import "github.com/omega-gateway/omega/domain"

// Provider call purposes: what omega called the provider for. Every call
// is recorded by the event of its outcome, and every such event names
// its purpose (ProviderCallOf), so tokens and cost add up per purpose in
// the audit, the web UI and the metrics.
const (
	PurposeTurn       = "turn"       // a turn's reply (ProviderReplied, ProviderFailed)
	PurposePlanStep   = "plan_step"  // a step of a multi-step plan (PlanStepCompleted)
	PurposeClassifier = "classifier" // a turn's route: direct or a plan (RouteDecided)
	PurposeHeartbeat  = "heartbeat"  // a check-in's grouping and group calls
	PurposeSummary    = "summary"    // a closed conversation's summary (SummaryWritten)
	PurposeFacts      = "facts"      // facts extracted at a conversation's close (FactsExtracted)
	PurposeSelfHeal   = "self_heal"  // a self-heal follow-up (SelfHealFollowUpReplied)
	PurposeBuild      = "build"      // an agent of a build's phase (AgentReplied)
)

// Purposes lists the purposes in the order reports show them.
func Purposes() []string {
	return []string{PurposeTurn, PurposePlanStep, PurposeClassifier, PurposeHeartbeat, PurposeSummary, PurposeFacts, PurposeSelfHeal, PurposeBuild}
}

// ProviderCall is one provider call as an event records it.
type ProviderCall struct {
	Purpose string
	Failed  bool
	Usage   CallUsage
}

// CallRecorder is implemented by the events that record a provider call.
type CallRecorder interface {
	ProviderCall() (ProviderCall, bool)
}

// ProviderCallOf returns the provider call a payload records, if any.
func ProviderCallOf(p domain.Payload) (ProviderCall, bool) {
	if r, ok := p.(CallRecorder); ok {
		return r.ProviderCall()
	}
	return ProviderCall{}, false
}

// OptionalCall is the call an outcome records in its usage; an event
// written before usage was recorded there counts as no call.
func OptionalCall(purpose string, u *CallUsage, failed bool) (ProviderCall, bool) {
	if u == nil {
		return ProviderCall{}, false
	}
	return ProviderCall{Purpose: purpose, Failed: failed, Usage: *u}, true
}

// CalledCall is the call of an event that is only recorded after a call
// (one written before usage was recorded there still counts, usage
// unknown).
func CalledCall(purpose string, u *CallUsage, failed bool) (ProviderCall, bool) {
	c := ProviderCall{Purpose: purpose, Failed: failed}
	if u != nil {
		c.Usage = *u
	}
	return c, true
}
