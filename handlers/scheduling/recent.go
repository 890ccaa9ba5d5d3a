package scheduling

type doneTurn struct{ chat, turn string }

// recentDone bounds Scheduler.recent: far more turns than complete while
// the read model lags behind the log.
const recentDone = 1024

// completedHere notes that turn of chat completed here.
func (s *Scheduler) completedHere(chat, tn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) == recentDone {
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, doneTurn{chat, tn})
}

// doneHere returns the chat's turns completed here lately.
func (s *Scheduler) doneHere(chat string) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := map[string]bool{}
	for _, d := range s.recent {
		if d.chat == chat {
			done[d.turn] = true
		}
	}
	return done
}
