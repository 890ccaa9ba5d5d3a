package domain

import "testing"

// Every event that records a provider call names its purpose; an
// outcome without a call (a short checklist, an old summary) names none.
func TestProviderCallOf(t *testing.T) {
	u := &CallUsage{DurationMs: 5, InputTokens: 10, OutputTokens: 2, UsageReported: true}
	cases := []struct {
		p       Payload
		purpose string
		failed  bool
		call    bool
	}{
		{ProviderReplied{InputTokens: 10}, PurposeTurn, false, true},
		{ProviderFailed{DurationMs: 3}, PurposeTurn, true, true},
		{PlanStepCompleted{Usage: u}, PurposePlanStep, false, true},
		{PlanStepFailed{Usage: u}, PurposePlanStep, true, true},
		{RouteDecided{Usage: u}, PurposeClassifier, false, true},
		{RouteDecided{Direct: true, Prefilter: true}, "", false, false},
		{HeartbeatClassified{Groups: []HeartbeatGroup{{Name: "all"}}}, "", false, false},
		{HeartbeatClassified{Raw: "a: 1", Usage: u}, PurposeHeartbeat, false, true},
		{HeartbeatGroupReplied{Raw: "HEARTBEAT_OK", Usage: u}, PurposeHeartbeat, false, true},
		{HeartbeatGroupReplied{Raw: "HEARTBEAT_OK"}, PurposeHeartbeat, false, true}, // recorded before usage was
		{HeartbeatGroupFailed{Error: "x", Usage: u}, PurposeHeartbeat, true, true},
		{SummaryWritten{Text: "s", Usage: u}, PurposeSummary, false, true},
		{SummaryWritten{Text: "s"}, "", false, false},
		{FactsExtracted{Raw: "none", Usage: u}, PurposeFacts, false, true},
		{SelfHealFollowUpReplied{Raw: "SELF_HEAL_RESOLVED", Usage: u}, PurposeSelfHeal, false, true},
		{SelfHealFollowUpReplied{Error: "down"}, PurposeSelfHeal, true, true},
		{TurnCompleted{}, "", false, false},
	}
	types := map[string]bool{}
	for _, typ := range ProviderCallEvents() {
		types[typ] = true
	}
	for _, c := range cases {
		got, ok := ProviderCallOf(c.p)
		if ok != c.call || got.Purpose != c.purpose || got.Failed != c.failed {
			t.Errorf("%T %+v: %+v %v, want %q failed=%v call=%v", c.p, c.p, got, ok, c.purpose, c.failed, c.call)
		}
		if ok && !types[c.p.EventType()] {
			t.Errorf("%s records calls but is not in ProviderCallEvents", c.p.EventType())
		}
	}
}
