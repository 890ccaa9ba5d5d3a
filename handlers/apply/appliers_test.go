package apply

import (
	"testing"

	"github.com/omega-gateway/omega/domain/markers"
)

// TestEveryMarkerSpecHasAnApplier: a marker added to markers.Specs without
// an apply function (or an applier left behind by a removed spec) fails.
func TestEveryMarkerSpecHasAnApplier(t *testing.T) {
	names := map[string]bool{}
	for _, s := range markers.Specs() {
		names[s.Name] = true
		if _, ok := appliers[s.Name]; !ok {
			t.Errorf("marker %s has a spec but no applier", s.Name)
		}
	}
	for name := range appliers {
		if !names[name] {
			t.Errorf("applier for %s has no marker spec", name)
		}
	}
}
