package events_test

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
)

// Every event that records a provider call names its purpose; an
// outcome without a call (a short checklist, an old summary) names none.
func TestProviderCallOf(t *testing.T) {
	u := &domain.CallUsage{DurationMs: 5, InputTokens: 10, OutputTokens: 2, UsageReported: true}
	cases := []struct {
		p       domain.Payload
		purpose string
		failed  bool
		call    bool
	}{
		{domain.ProviderReplied{InputTokens: 10}, domain.PurposeTurn, false, true},
		{domain.ProviderFailed{DurationMs: 3}, domain.PurposeTurn, true, true},
		{domain.PlanStepCompleted{Usage: u}, domain.PurposePlanStep, false, true},
		{domain.PlanStepFailed{Usage: u}, domain.PurposePlanStep, true, true},
		{domain.RouteDecided{Usage: u}, domain.PurposeClassifier, false, true},
		{domain.RouteDecided{Direct: true, Prefilter: true}, "", false, false},
		{domain.HeartbeatClassified{Groups: []domain.HeartbeatGroup{{Name: "all"}}}, "", false, false},
		{domain.HeartbeatClassified{Raw: "a: 1", Usage: u}, domain.PurposeHeartbeat, false, true},
		{domain.HeartbeatGroupReplied{Raw: "HEARTBEAT_OK", Usage: u}, domain.PurposeHeartbeat, false, true},
		{domain.HeartbeatGroupReplied{Raw: "HEARTBEAT_OK"}, domain.PurposeHeartbeat, false, true}, // recorded before usage was
		{domain.HeartbeatGroupFailed{Error: "x", Usage: u}, domain.PurposeHeartbeat, true, true},
		{domain.SummaryWritten{Text: "s", Usage: u}, domain.PurposeSummary, false, true},
		{domain.SummaryWritten{Text: "s"}, "", false, false},
		{domain.FactsExtracted{Raw: "none", Usage: u}, domain.PurposeFacts, false, true},
		{domain.SelfHealFollowUpReplied{Raw: "SELF_HEAL_RESOLVED", Usage: u}, domain.PurposeSelfHeal, false, true},
		{domain.SelfHealFollowUpReplied{Error: "down"}, domain.PurposeSelfHeal, true, true},
		{domain.TurnCompleted{}, "", false, false},
	}
	types := map[string]bool{}
	for _, typ := range events.ProviderCallTypes() {
		types[typ] = true
	}
	for _, c := range cases {
		got, ok := domain.ProviderCallOf(c.p)
		if ok != c.call || got.Purpose != c.purpose || got.Failed != c.failed {
			t.Errorf("%T %+v: %+v %v, want %q failed=%v call=%v", c.p, c.p, got, ok, c.purpose, c.failed, c.call)
		}
		if ok && !types[c.p.EventType()] {
			t.Errorf("%s records calls but is not in ProviderCallEvents", c.p.EventType())
		}
	}
}
