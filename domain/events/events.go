// Package events is the catalogue of every event type omega writes: the
// registry readers decode with, and the types that answer questions
// across aggregates (which events record a provider call).
package events

import (
	"slices"
	"sync"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
)

// NewRegistry returns a registry of every event type omega writes.
func NewRegistry() *domain.Registry {
	r := domain.NewRegistry()
	for _, register := range []func(*domain.Registry){
		system.RegisterSystemEvents, sender.RegisterEvents, turn.RegisterEvents,
		system.RegisterWhatsAppEvents, task.RegisterEvents, heartbeat.RegisterHeartbeatChecklistEvents,
		selfheal.RegisterEvents, learning.RegisterEvents, catalog.RegisterSkillEvents,
		heartbeat.RegisterHeartbeatCycleEvents, summary.RegisterEvents, catalog.RegisterProjectEvents,
		access.RegisterEvents, system.RegisterInputsEvents, build.RegisterEvents, budget.RegisterEvents,
	} {
		register(r)
	}
	return r
}

// ProviderCallTypes lists, sorted, the event types that may record a
// provider call (usage.ProviderCallOf), so that readers decode only those.
func ProviderCallTypes() []string { return slices.Clone(providerCallTypes()) }

// IsProviderCall says whether events of type t may record a provider call.
// Read models ask it of every event they apply, so it costs a search of a
// list made once.
func IsProviderCall(t string) bool {
	_, found := slices.BinarySearch(providerCallTypes(), t)
	return found
}

// providerCallTypes is made once: the catalogue is fixed when omega is
// built, and building a registry per event cost a live applier half its CPU.
var providerCallTypes = sync.OnceValue(func() []string {
	r := NewRegistry()
	var out []string
	for _, t := range r.Types() {
		if _, ok := r.Sample(t).(usage.CallRecorder); ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
})
