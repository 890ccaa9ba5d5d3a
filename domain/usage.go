package domain

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
)

// Purposes lists the purposes in the order reports show them.
func Purposes() []string {
	return []string{PurposeTurn, PurposePlanStep, PurposeClassifier, PurposeHeartbeat, PurposeSummary, PurposeFacts, PurposeSelfHeal}
}

// ProviderCall is one provider call as an event records it.
type ProviderCall struct {
	Purpose string
	Failed  bool
	Usage   CallUsage
}

// callRecorder is implemented by the events that record a provider call.
type callRecorder interface {
	providerCall() (ProviderCall, bool)
}

// ProviderCallOf returns the provider call a payload records, if any.
func ProviderCallOf(p Payload) (ProviderCall, bool) {
	if r, ok := p.(callRecorder); ok {
		return r.providerCall()
	}
	return ProviderCall{}, false
}

// optionalCall is the call an outcome records in its usage; an event
// written before usage was recorded there counts as no call.
func optionalCall(purpose string, u *CallUsage, failed bool) (ProviderCall, bool) {
	if u == nil {
		return ProviderCall{}, false
	}
	return ProviderCall{Purpose: purpose, Failed: failed, Usage: *u}, true
}

// calledCall is the call of an event that is only recorded after a call
// (one written before usage was recorded there still counts, usage
// unknown).
func calledCall(purpose string, u *CallUsage, failed bool) (ProviderCall, bool) {
	c := ProviderCall{Purpose: purpose, Failed: failed}
	if u != nil {
		c.Usage = *u
	}
	return c, true
}

func (e ProviderReplied) providerCall() (ProviderCall, bool) {
	return ProviderCall{Purpose: PurposeTurn, Usage: e.Usage()}, true
}

func (e ProviderFailed) providerCall() (ProviderCall, bool) {
	return ProviderCall{Purpose: PurposeTurn, Failed: true, Usage: CallUsage{DurationMs: e.DurationMs}}, true
}

func (e PlanStepCompleted) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposePlanStep, e.Usage, false)
}

func (e PlanStepFailed) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposePlanStep, e.Usage, true)
}

func (e RouteDecided) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposeClassifier, e.Usage, e.Error != "")
}

func (e HeartbeatClassified) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposeHeartbeat, e.Usage, e.Raw == "" && e.Error != "")
}

func (e HeartbeatGroupReplied) providerCall() (ProviderCall, bool) {
	return calledCall(PurposeHeartbeat, e.Usage, false)
}

func (e HeartbeatGroupFailed) providerCall() (ProviderCall, bool) {
	return calledCall(PurposeHeartbeat, e.Usage, true)
}

func (e SummaryWritten) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposeSummary, e.Usage, e.Fallback)
}

func (e FactsExtracted) providerCall() (ProviderCall, bool) {
	return optionalCall(PurposeFacts, e.Usage, e.Error != "")
}

func (e SelfHealFollowUpReplied) providerCall() (ProviderCall, bool) {
	return calledCall(PurposeSelfHeal, e.Usage, e.Error != "")
}

// ProviderCallEvents lists the event types that may record a provider
// call, so that readers decode only those.
func ProviderCallEvents() []string {
	var out []string
	for _, p := range []Payload{ProviderReplied{}, ProviderFailed{}, PlanStepCompleted{}, PlanStepFailed{}, RouteDecided{}, HeartbeatClassified{},
		HeartbeatGroupReplied{}, HeartbeatGroupFailed{}, SummaryWritten{}, FactsExtracted{}, SelfHealFollowUpReplied{}} {
		out = append(out, p.EventType())
	}
	return out
}
