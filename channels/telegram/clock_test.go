package telegram

import (
	"slices"
	"time"
)

// fakeTimer is a WithTimer timer in the fake time of sleeps.
type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

// after implements WithTimer: f runs when advance passes d from now.
func (s *sleeps) after(d time.Duration, f func()) func() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &fakeTimer{at: s.now.Add(d), f: f}
	s.timers = append(s.timers, t)
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		s.timers = slices.DeleteFunc(s.timers, func(x *fakeTimer) bool { return x == t })
		return was
	}
}

// fireDue runs the timers due by now, earliest first, outside the lock:
// a timer's function may set another.
func (s *sleeps) fireDue() {
	for {
		s.mu.Lock()
		var due *fakeTimer
		for _, t := range s.timers {
			if !t.at.After(s.now) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due == nil {
			s.mu.Unlock()
			return
		}
		due.stopped = true
		s.timers = slices.DeleteFunc(s.timers, func(x *fakeTimer) bool { return x == due })
		s.mu.Unlock()
		due.f()
	}
}

// pending is the number of timers not yet run or stopped.
func (s *sleeps) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.timers)
}
