package scheduling

import (
	"context"
	"log/slog"
	"time"
)

// worker is the state of one chat's running work that the scheduler's
// loop shares with it (guarded by Scheduler.mu).
type worker struct {
	wake    chan struct{}
	kicked  []string // turns received here, oldest first, not yet done
	idle    bool     // lingering with nothing to run (see linger)
	lost    func()   // stops the worker when its lease was lost
	leaving bool     // giving its lease up
}

// minLinger is how long at least a worker with nothing left to run keeps
// its chat's lease before releasing it: a sender who writes again soon
// (most do) costs no lease taken and released per message. It lingers a
// renewal period (TTL/3) when that is longer: held leases are renewed
// together in one write, so keeping a lease costs next to nothing, while
// giving it up and taking it again costs two writes for the next message.
const minLinger = 2 * time.Second

// lingerFor is how long a worker lingers (see minLinger).
func (s *Scheduler) lingerFor() time.Duration { return max(minLinger, s.leases.TTL()/3) }

// running tells whether a worker runs chat here.
func (s *Scheduler) running(chat string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.active[chat]
	return ok
}

func (s *Scheduler) wakeWorker(chat string) {
	s.mu.Lock()
	w, ok := s.active[chat]
	s.mu.Unlock()
	if ok {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// start runs a chat's work here if no process does yet; turn, when set,
// is a turn of the chat just received here. Only Run's goroutine calls
// it, so two workers for one chat are never started.
func (s *Scheduler) start(ctx context.Context, chat, tn string) {
	s.mu.Lock()
	w, running := s.active[chat]
	if running && tn != "" {
		w.kicked = append(w.kicked, tn)
	}
	idle := running && w.idle
	s.mu.Unlock()
	if running {
		// A lingering worker is woken for a sweep's find too (a turn
		// received by another process).
		if tn != "" || idle {
			s.wakeWorker(chat)
		}
		return
	}
	if s.isBusy(chat, time.Now()) {
		return // another process runs this chat; it finds the turn in the log
	}
	ok, err := s.leases.Acquire(ctx, chat)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("scheduler: acquire lease", "chat", chat, "err", err)
		}
		return
	}
	if !ok {
		// Another process runs this chat and finds the turn in the log; a
		// sweep adopts the turn if it is still open after adoptAfter.
		s.markBusy(chat, time.Now().Add(recheckBusy))
		return
	}
	w = &worker{wake: make(chan struct{}, 1)}
	if tn != "" {
		w.kicked = []string{tn}
	}
	s.mu.Lock()
	s.active[chat] = w
	s.mu.Unlock()
	s.wg.Add(1)
	go s.work(ctx, chat, w)
}

// work runs one chat's turns in order while holding its lease.
func (s *Scheduler) work(ctx context.Context, chat string, w *worker) {
	defer s.wg.Done()
	log := s.logger.With("chat", chat)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The scheduler's renewer keeps the lease (renewLeases); losing it
	// stops the worker so two processes never run one chat's turns at once.
	s.mu.Lock()
	w.lost = cancel
	s.mu.Unlock()
	defer func() {
		cancel()
		s.leave(chat, w, log)
	}()

	applied := s.subscribe(ctx)
	done := s.doneHere(chat)   // completed here; the read model may lag
	acked := map[string]bool{} // only this worker touches it
	coalesced := map[string]bool{}
	backoff := time.Second
	for ctx.Err() == nil {
		turns, h, err := s.pending(ctx, chat, w, done)
		if err != nil {
			if ctx.Err() == nil {
				log.Error("scheduler: read chat turns", "err", err)
			}
			return
		}
		if h != ready {
			s.waitApplied(ctx, applied, h, w, done)
			continue
		}
		if len(turns) == 0 {
			if !s.linger(ctx, w) {
				return
			}
			continue
		}
		head := turns[0]
		if s.window > 0 && !coalesced[head.ID] {
			// The burst behind the head becomes part of it; look again.
			if !s.coalesceOnce(ctx, chat, w, head.ID, done, applied, log) {
				return
			}
			coalesced[head.ID] = true
			continue
		}
		s.ackQueued(ctx, turns[1:], acked, s.answered(ctx, head.ID), log)
		if err := s.runTurn(ctx, chat, w, head.ID, done, acked, log); err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Error("turn failed; will retry", "turn", head.ID, "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, time.Minute)
			continue
		}
		backoff = time.Second
		// The next turn need not wait for the read model to show this one
		// when its exchange is kept (see pending).
		if err := s.read.Kept().Keep(ctx, s.driver.Store, s.driver.Registry, chat, head.ID); err != nil {
			log.Warn("scheduler: keep the turn's exchange; the next turn waits for the read model", "turn", head.ID, "err", err)
		}
		done[head.ID] = true
		s.completedHere(chat, head.ID)
	}
}

// leave releases a worker's lease, then takes it out of the active set:
// a kick that came in between was added to its list; it is handed back so
// that a fresh worker, holding a fresh lease, runs it.
func (s *Scheduler) leave(chat string, w *worker, log *slog.Logger) {
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	s.mu.Lock()
	w.leaving = true
	s.mu.Unlock()
	if err := s.leases.Release(rctx, chat); err != nil {
		log.Warn("scheduler: release lease", "err", err)
	}
	s.mu.Lock()
	delete(s.active, chat)
	left := w.kicked
	s.mu.Unlock()
	for _, id := range left {
		s.Kick(chat, id)
	}
}

// linger waits, holding the lease, for the chat's next turn; false when
// none came within lingerFor.
func (s *Scheduler) linger(ctx context.Context, w *worker) bool {
	s.mu.Lock()
	w.idle = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		w.idle = false
		s.mu.Unlock()
	}()
	t := time.NewTimer(s.lingerFor())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-w.wake:
		return true
	case <-t.C:
		return false
	}
}
