package scheduling

import (
	"context"
	"time"
)

// renewLeases renews the leases of every chat running here every TTL/3
// until ctx ends, all in one write (a renewal of each lease on its own
// made a thousand lingering chats cost a thousand writes every few
// seconds), and stops the workers whose lease was lost. A renewal that
// fails is logged and tried again at the next tick.
func (s *Scheduler) renewLeases(ctx context.Context) {
	t := time.NewTicker(s.leases.TTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.renewOnce(ctx)
	}
}

func (s *Scheduler) renewOnce(ctx context.Context) {
	s.mu.Lock()
	held := make(map[string]*worker, len(s.active))
	chats := make([]string, 0, len(s.active))
	for chat, w := range s.active {
		if !w.leaving {
			held[chat] = w
			chats = append(chats, chat)
		}
	}
	s.mu.Unlock()
	if len(chats) == 0 {
		return
	}
	renewed, err := s.leases.RenewMany(ctx, chats)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("scheduler: renew leases", "chats", len(chats), "err", err)
		}
		return
	}
	for chat, w := range held {
		if renewed[chat] {
			continue
		}
		s.mu.Lock()
		lost, leaving := w.lost, w.leaving
		s.mu.Unlock()
		if leaving || lost == nil {
			continue // gave it up meanwhile, or not started yet
		}
		s.logger.Error("scheduler: lease lost to another process; stopping this chat's work", "chat", chat)
		lost()
	}
}
