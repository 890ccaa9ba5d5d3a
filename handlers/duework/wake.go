package duework

import (
	"time"

	"github.com/omega-gateway/omega/domain/markers"
)

// Setter puts an item on the clock (the Clock does).
type Setter interface {
	Set(it Item)
}

// MarkerWake puts one item on the clock, due now, for each applied marker
// of one name: the heartbeat restarts when its interval changed, the
// self-heal effort is looked at when a reply opened or continued it. It
// is an apply.Follower that needs only the clock, so the marker applier
// can have it before the runners (which apply markers through that
// applier) exist.
type MarkerWake struct {
	Marker string // marker name that wakes the item
	Item   Item   // kind and id; Due is set when it wakes
	Clock  Setter
	Now    func() time.Time // nil: time.Now
}

// Applied wakes the item for each marker among applied with the name.
func (w MarkerWake) Applied(applied []markers.AppliedMarker) {
	for _, am := range applied {
		if am.Name != w.Marker {
			continue
		}
		it := w.Item
		it.Due = time.Now()
		if w.Now != nil {
			it.Due = w.Now()
		}
		w.Clock.Set(it)
	}
}
