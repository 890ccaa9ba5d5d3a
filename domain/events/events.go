// Package events is the catalogue of every event type omega writes: the
// registry readers decode with, and the types that answer questions
// across aggregates (which events record a provider call).
package events

import (
	"slices"

	"github.com/omega-gateway/omega/domain"
)

// NewRegistry returns a registry of every event type omega writes.
func NewRegistry() *domain.Registry {
	r := domain.NewRegistry()
	for _, register := range []func(*domain.Registry){
		domain.RegisterSystemEvents, domain.RegisterSenderEvents, domain.RegisterTurnEvents,
		domain.RegisterWhatsAppEvents, domain.RegisterTaskEvents, domain.RegisterHeartbeatChecklistEvents,
		domain.RegisterSelfHealEvents, domain.RegisterLearningEvents, domain.RegisterSkillEvents,
		domain.RegisterHeartbeatCycleEvents, domain.RegisterSummaryEvents, domain.RegisterProjectEvents,
		domain.RegisterAccessEvents, domain.RegisterInputsEvents,
	} {
		register(r)
	}
	return r
}

// ProviderCallTypes lists, sorted, the event types that may record a
// provider call (domain.ProviderCallOf), so that readers decode only those.
func ProviderCallTypes() []string {
	r := NewRegistry()
	var out []string
	for _, t := range r.Types() {
		if _, ok := r.Sample(t).(domain.CallRecorder); ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
