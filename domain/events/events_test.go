package events_test

import (
	"slices"
	"testing"

	"github.com/omega-gateway/omega/domain/events"
)

func TestProviderCallTypesAreTheEventsThatRecordACall(t *testing.T) {
	want := []string{"AgentReplied", "FactsExtracted", "HeartbeatClassified", "HeartbeatGroupFailed", "HeartbeatGroupReplied",
		"PlanStepCompleted", "PlanStepFailed", "ProviderFailed", "ProviderReplied", "RouteDecided",
		"SelfHealFollowUpReplied", "SummaryWritten"}
	if got := events.ProviderCallTypes(); !slices.Equal(got, want) {
		t.Fatalf("ProviderCallTypes() = %v, want %v", got, want)
	}
}

func TestEveryRegisteredTypeHasASampleOfItsName(t *testing.T) {
	r := events.NewRegistry()
	for _, name := range r.Types() {
		p := r.Sample(name)
		if p == nil || p.EventType() != name {
			t.Errorf("Sample(%q) = %#v", name, p)
		}
	}
	if r.Sample("NoSuchEvent") != nil {
		t.Error("Sample of an unknown type is not nil")
	}
}
