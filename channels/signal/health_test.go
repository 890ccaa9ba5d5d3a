package signal

import (
	"strconv"
	"sync"

	"github.com/omega-gateway/omega/channels"
)

type healthLog struct {
	mu  sync.Mutex
	got []channels.Health
}

func (h *healthLog) report(ev channels.Health) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, ev)
}

func (h *healthLog) states() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.got {
		out = append(out, ev.State)
	}
	return out
}

func (h *healthLog) last() string {
	s := h.states()
	if len(s) == 0 {
		return channels.HealthUp
	}
	return s[len(s)-1]
}

func strconvFormat(n int64) string { return strconv.FormatInt(n, 10) }
