package scheduling

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/projections"
)

// A process takes a chat's lease where the chat's work is: the process
// that received a message kicks its own scheduler, which takes the lease
// (or finds its worker already holding it). Another process's sweep sees
// the same open turn in the read model, but trying to take a lease that
// is held costs a write each time (an upsert that changes nothing), so a
// sweep leaves a turn received elsewhere alone while it is young, reads
// the leases of the chats it would take before writing, and, once it has
// seen a chat's lease held, neither it nor a kick tries again before
// recheckBusy has passed.
const (
	// adoptAfter is how long a turn stays open before a sweep considers
	// running it though it was not kicked here: by then the process that
	// received it has had time to take its chat's lease, so a turn still
	// not running is one whose process died or whose lease holder gave
	// the lease up before it saw the turn.
	adoptAfter = time.Second
	// recheckBusy is how long a chat whose lease another process holds
	// is left alone before its lease is read again.
	recheckBusy = time.Second
)

// isBusy tells whether chat's lease was lately seen held elsewhere.
func (s *Scheduler) isBusy(chat string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.busy[chat]
	return ok && now.Before(until)
}

// markBusy notes that another process holds chat's lease, to be looked at
// again at until.
func (s *Scheduler) markBusy(chat string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy[chat] = until
}

// forgetBusy drops the chats due for another look, so that the set holds
// only chats held elsewhere now.
func (s *Scheduler) forgetBusy(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for chat, until := range s.busy {
		if !now.Before(until) {
			delete(s.busy, chat)
		}
	}
}

// adoptable returns, of the chats whose open turns a sweep found (the
// heads of their queues) and that run nowhere here, those this process
// should try to lease: those whose oldest open turn is older than
// adoptAfter, and on the first sweep also those whose turn was received
// before this process started and whose lease is still its own (a
// restarted process resumes the turns it was running at once) — not a
// young turn whose lease nobody holds, which the process that received it
// is taking the lease for (a process joining a running cluster would
// otherwise race it), nor one received since, however late the first
// sweep comes; and never one whose lease was lately seen held elsewhere.
// The leases of the rest are read in one query, and those held elsewhere
// are marked busy.
func (s *Scheduler) adoptable(ctx context.Context, heads []projections.OpenTurn, first bool) ([]string, error) {
	now := time.Now()
	s.forgetBusy(now)
	var chats []string
	young := map[string]bool{} // resumed only if their lease is this process's
	for _, t := range heads {
		old := now.Sub(t.ReceivedAt) >= adoptAfter
		waiting := first && t.ReceivedAt.Before(s.started) // when this process started
		if !old && !waiting {
			continue
		}
		if s.isBusy(t.Chat, now) {
			continue
		}
		chats = append(chats, t.Chat)
		young[t.Chat] = !old
	}
	if len(chats) == 0 {
		return nil, nil
	}
	elsewhere, mine, err := s.leases.Holders(ctx, chats)
	if err != nil {
		return nil, err
	}
	free := chats[:0]
	for _, chat := range chats {
		if until, ok := elsewhere[chat]; ok {
			s.markBusy(chat, minTime(until, now.Add(recheckBusy)))
			continue
		}
		if young[chat] && !mine[chat] {
			continue
		}
		free = append(free, chat)
	}
	return free, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
