package events_test

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
)

// Every event that records a provider call names its purpose; an
// outcome without a call (a short checklist, an old summary) names none.
func TestProviderCallOf(t *testing.T) {
	u := &usage.CallUsage{DurationMs: 5, InputTokens: 10, OutputTokens: 2, UsageReported: true}
	cases := []struct {
		p       domain.Payload
		purpose string
		failed  bool
		call    bool
	}{
		{turn.ProviderReplied{InputTokens: 10}, usage.PurposeTurn, false, true},
		{turn.ProviderFailed{DurationMs: 3}, usage.PurposeTurn, true, true},
		{turn.PlanStepCompleted{Usage: u}, usage.PurposePlanStep, false, true},
		{turn.PlanStepFailed{Usage: u}, usage.PurposePlanStep, true, true},
		{turn.RouteDecided{Usage: u}, usage.PurposeClassifier, false, true},
		{turn.RouteDecided{Direct: true, Prefilter: true}, "", false, false},
		{heartbeat.HeartbeatClassified{Groups: []heartbeat.HeartbeatGroup{{Name: "all"}}}, "", false, false},
		{heartbeat.HeartbeatClassified{Raw: "a: 1", Usage: u}, usage.PurposeHeartbeat, false, true},
		{heartbeat.HeartbeatGroupReplied{Raw: "HEARTBEAT_OK", Usage: u}, usage.PurposeHeartbeat, false, true},
		{heartbeat.HeartbeatGroupReplied{Raw: "HEARTBEAT_OK"}, usage.PurposeHeartbeat, false, true}, // recorded before usage was
		{heartbeat.HeartbeatGroupFailed{Error: "x", Usage: u}, usage.PurposeHeartbeat, true, true},
		{summary.SummaryWritten{Text: "s", Usage: u}, usage.PurposeSummary, false, true},
		{summary.SummaryWritten{Text: "s"}, "", false, false},
		{summary.FactsExtracted{Raw: "none", Usage: u}, usage.PurposeFacts, false, true},
		{selfheal.SelfHealFollowUpReplied{Raw: "SELF_HEAL_RESOLVED", Usage: u}, usage.PurposeSelfHeal, false, true},
		{selfheal.SelfHealFollowUpReplied{Error: "down"}, usage.PurposeSelfHeal, true, true},
		{build.AgentReplied{Text: "VERDICT: pass", Usage: *u}, usage.PurposeBuild, false, true},
		{build.AgentReplied{Error: "timeout"}, usage.PurposeBuild, true, true},
		{turn.TurnCompleted{}, "", false, false},
	}
	types := map[string]bool{}
	for _, typ := range events.ProviderCallTypes() {
		types[typ] = true
	}
	for _, c := range cases {
		got, ok := usage.ProviderCallOf(c.p)
		if ok != c.call || got.Purpose != c.purpose || got.Failed != c.failed {
			t.Errorf("%T %+v: %+v %v, want %q failed=%v call=%v", c.p, c.p, got, ok, c.purpose, c.failed, c.call)
		}
		if ok && !types[c.p.EventType()] {
			t.Errorf("%s records calls but is not in ProviderCallEvents", c.p.EventType())
		}
	}
}
