package channels

import (
	"log/slog"
	"sync"
	"time"
)

// HealthTracker follows whether a channel can receive and reports each
// change of state, not each failed attempt, to the channel's HealthFunc.
// It may be fed from several goroutines; changes reach the function in
// the order they happened.
type HealthTracker struct {
	channel string
	log     *slog.Logger
	now     func() time.Time

	mu       sync.Mutex
	f        HealthFunc
	state    string
	failures int
}

// NewHealthTracker returns a tracker of the named channel, presumed able
// to receive until an attempt fails; now stamps the changes (nil: the
// clock).
func NewHealthTracker(channel string, log *slog.Logger, now func() time.Time) *HealthTracker {
	if now == nil {
		now = time.Now
	}
	return &HealthTracker{channel: channel, log: log, now: now, state: HealthUp}
}

// SetFunc sets the function changes are reported to (ReportHealth).
func (h *HealthTracker) SetFunc(f HealthFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.f = f
}

// Failed records a failed attempt to receive; state is HealthDown or
// HealthStalled. It returns the failures since the channel was last up.
func (h *HealthTracker) Failed(state, reason string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	if state != h.state {
		h.state = state
		h.log.Error(h.channel+" stopped receiving", "state", state, "err", reason, "failures", h.failures)
		h.report(Health{State: state, Err: reason, Failures: h.failures})
	}
	return h.failures
}

// OK records that the channel receives (again).
func (h *HealthTracker) OK() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == HealthUp {
		return
	}
	h.log.Info(h.channel+" receiving again", "failures", h.failures)
	h.report(Health{State: HealthUp, Failures: h.failures})
	h.state, h.failures = HealthUp, 0
}

// Up reports whether the channel was receiving at its last attempt.
func (h *HealthTracker) Up() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == HealthUp
}

// report runs under h.mu; f returns promptly (HealthFunc).
func (h *HealthTracker) report(ev Health) {
	if h.f == nil {
		return
	}
	ev.Channel, ev.At = h.channel, h.now()
	h.f(ev)
}
