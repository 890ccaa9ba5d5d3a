package scheduling

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// The shared copy of the open queues is read again only when the read
// model applied an event that changes a queue.
func TestQueueMayHaveMoved(t *testing.T) {
	received, replied, completed := domain.MessageReceived{}.EventType(), domain.ProviderReplied{}.EventType(), domain.TurnCompleted{}.EventType()
	// The log after position 10, as the shared reader holds it.
	log := []domain.Event{
		{Position: 11, Type: replied},
		{Position: 12, Type: "ContextBuilt"},
		{Position: 13, Type: completed},
		{Position: 14, Type: received},
	}
	scan := func(evs []domain.Event) logWindow {
		return func(after int64, fn func(domain.Event) bool) bool {
			if after != 10 {
				return false
			}
			for _, e := range evs {
				if !fn(e) {
					break
				}
			}
			return true
		}
	}
	window := scan(log)
	// A window that holds no queue event at all.
	quiet := scan(log[:2])
	at := func(pos int64) func() (int64, bool) { return func() (int64, bool) { return pos, true } }
	tests := []struct {
		name    string
		copyAt  int64 // 0: no copy read yet
		window  logWindow
		through func() (int64, bool)
		want    bool
	}{
		{"no copy yet", 0, window, at(12), true},
		{"nothing applied since the copy", 10, window, at(10), false},
		{"a batch without queue events", 10, window, at(12), false},
		{"a batch with a completion", 10, window, at(13), true},
		{"the applied position past the window", 10, quiet, at(99), true},
		{"the same, within the window", 10, quiet, at(12), false},
		{"the copy's position not in the window", 7, window, at(12), true},
		{"no shared reader", 10, nil, at(12), true},
		{"no applied position", 10, window, func() (int64, bool) { return 0, false }, true},
		{"not told the applied position", 10, window, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scheduler{}
			if tc.copyAt != 0 {
				s.queue = &queueSnapshot{applied: tc.copyAt}
			}
			if got := s.queueMayHaveMoved(tc.window, tc.through); got != tc.want {
				t.Fatalf("queueMayHaveMoved = %v, want %v", got, tc.want)
			}
		})
	}
}
