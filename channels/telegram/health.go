package telegram

import (
	"errors"

	"github.com/omega-gateway/omega/channels"
)

// errStalled: a getUpdates call went unanswered past its deadline.
var errStalled = errors.New("getUpdates stalled")

// pollHealth follows the poller's state and reports each change (not
// each failed poll) to the channel's health function.
type pollHealth struct {
	c        *Channel
	state    string
	failures int
}

// failed records a failed poll: a stall or an outage.
func (h *pollHealth) failed(err error) {
	h.failures++
	state := channels.HealthDown
	if errors.Is(err, errStalled) {
		state = channels.HealthStalled
	}
	if state == h.state {
		return
	}
	h.state = state
	h.c.log.Error("telegram stopped receiving", "state", state, "err", err, "failed_polls", h.failures)
	h.report(channels.Health{State: state, Err: err.Error(), Failures: h.failures})
}

// ok records a poll the API answered.
func (h *pollHealth) ok() {
	if h.state == channels.HealthUp {
		return
	}
	h.c.log.Info("telegram receiving again", "failed_polls", h.failures)
	h.report(channels.Health{State: channels.HealthUp, Failures: h.failures})
	h.state, h.failures = channels.HealthUp, 0
}

func (h *pollHealth) report(ev channels.Health) {
	h.c.mu.Lock()
	f := h.c.health
	h.c.mu.Unlock()
	if f == nil {
		return
	}
	ev.Channel, ev.At = Name, h.c.now()
	f(ev)
}
