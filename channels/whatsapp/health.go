package whatsapp

import (
	"log/slog"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// connHealth follows whether the connection can receive and reports each
// change of state (not each connection event) to the health function. It
// is fed from whatsmeow's event goroutine and from Start's connect loop.
type connHealth struct {
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	f        channels.HealthFunc
	state    string
	failures int
}

func newConnHealth(log *slog.Logger) *connHealth {
	return &connHealth{log: log, now: time.Now, state: channels.HealthUp}
}

func (h *connHealth) setFunc(f channels.HealthFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.f = f
}

// failed records a connection failure; state is HealthDown or
// HealthStalled.
func (h *connHealth) failed(state, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures++
	if state == h.state {
		return
	}
	h.state = state
	h.log.Error("whatsapp stopped receiving", "state", state, "err", reason, "failures", h.failures)
	h.report(channels.Health{State: state, Err: reason, Failures: h.failures})
}

// ok records that the connection receives (again).
func (h *connHealth) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == channels.HealthUp {
		return
	}
	h.log.Info("whatsapp receiving again", "failures", h.failures)
	h.report(channels.Health{State: channels.HealthUp, Failures: h.failures})
	h.state, h.failures = channels.HealthUp, 0
}

// report runs under h.mu so that changes reach f in the order they
// happened; f returns promptly (channels.HealthFunc).
func (h *connHealth) report(ev channels.Health) {
	if h.f == nil {
		return
	}
	ev.Channel, ev.At = Name, h.now()
	h.f(ev)
}
