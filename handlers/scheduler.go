package handlers

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Scheduler runs turns: one sender's turns one at a time in arrival order,
// different senders concurrently. A sender's turns run in the process that
// holds the sender's lease, so the order holds across several omega
// processes on one database; a process that dies loses its leases after
// one TTL and another (or its own restart) resumes its open turns.
type Scheduler struct {
	Driver   *Driver
	Leases   *Leases
	Read     ReadModel
	Channels []string // channels this process can deliver to
	// Applied subscribes to signals that the read models have moved on.
	Applied func(ctx context.Context) <-chan struct{}
	Logger  *slog.Logger
	// Sweep is how often open turns are looked for without a signal.
	Sweep time.Duration

	kick   chan struct{}
	mu     sync.Mutex
	active map[string]chan struct{} // sender -> wake its worker
	wg     sync.WaitGroup
}

// Kick makes the scheduler look for new turns now.
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Scheduler) subscribe(ctx context.Context) <-chan struct{} {
	if s.Applied == nil {
		return nil
	}
	return s.Applied(ctx)
}

// Init prepares the scheduler; call it before Kick is used.
func (s *Scheduler) Init() {
	s.kick = make(chan struct{}, 1)
	s.active = map[string]chan struct{}{}
	if s.Sweep <= 0 {
		s.Sweep = time.Second
	}
}

// Run schedules until ctx ends, then waits for running turns to stop.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.Sweep)
	defer t.Stop()
	applied := s.subscribe(ctx)
	for {
		s.sweep(ctx)
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return ctx.Err()
		case <-s.kick:
		case <-applied:
		case <-t.C:
		}
	}
}

func (s *Scheduler) sweep(ctx context.Context) {
	open, err := s.Read.OpenTurns(ctx, s.Channels)
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("scheduler: read open turns", "err", err)
		}
		return
	}
	seen := map[string]bool{}
	for i, t := range open {
		s.mu.Lock()
		wake, running := s.active[t.Sender]
		s.mu.Unlock()
		if seen[t.Sender] {
			// A turn queued behind another: its worker must acknowledge it.
			// Waking workers only for this keeps a busy system from
			// re-reading every sender's queue on every change.
			if running && !t.Acked && open[i-1].Sender == t.Sender {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
			continue
		}
		seen[t.Sender] = true
		if running {
			continue
		}
		ok, err := s.Leases.Acquire(ctx, t.Sender)
		if err != nil {
			s.Logger.Error("scheduler: acquire lease", "sender", t.Sender, "err", err)
			continue
		}
		if !ok {
			continue // another process runs this sender
		}
		wake = make(chan struct{}, 1)
		s.mu.Lock()
		s.active[t.Sender] = wake
		s.mu.Unlock()
		s.wg.Add(1)
		go s.work(ctx, t.Sender, wake)
	}
}

// work runs one sender's open turns in order while holding its lease.
func (s *Scheduler) work(ctx context.Context, sender string, wake chan struct{}) {
	defer s.wg.Done()
	log := s.Logger.With("sender", sender)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	renewDone := make(chan struct{})
	go func() {
		defer close(renewDone)
		s.renew(ctx, sender, cancel, log)
	}()
	defer func() {
		cancel()
		<-renewDone
		s.mu.Lock()
		delete(s.active, sender)
		s.mu.Unlock()
		// Release with a fresh context: ours is cancelled by now.
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if err := s.Leases.Release(rctx, sender); err != nil {
			log.Warn("scheduler: release lease", "err", err)
		}
	}()

	applied := s.subscribe(ctx)
	done := map[string]bool{}  // completed here; the read model may lag
	acked := map[string]bool{} // only this worker touches it
	backoff := time.Second
	for ctx.Err() == nil {
		open, err := s.Read.SenderOpenTurns(ctx, sender)
		if err != nil {
			log.Error("scheduler: read sender turns", "err", err)
			return
		}
		var pending []OpenTurn
		lagging := false
		for _, t := range open {
			if done[t.ID] {
				lagging = true
				continue
			}
			pending = append(pending, t)
		}
		if lagging {
			// The next turn's history must include the last exchange.
			s.waitApplied(ctx, applied)
			continue
		}
		if len(pending) == 0 {
			return
		}
		head := pending[0]
		s.ackQueued(ctx, pending[1:], acked, log)
		errc := make(chan error, 1)
		go func() { errc <- s.Driver.Run(ctx, head.ID) }()
		err = s.waitTurn(ctx, sender, head.ID, errc, wake, acked, log)
		if err != nil {
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
		done[head.ID] = true
	}
}

// waitTurn waits for the running turn, acknowledging messages that queue
// up behind it meanwhile.
func (s *Scheduler) waitTurn(ctx context.Context, sender, head string, errc <-chan error, wake chan struct{}, acked map[string]bool, log *slog.Logger) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-wake:
			open, err := s.Read.SenderOpenTurns(ctx, sender)
			if err != nil {
				continue
			}
			var queued []OpenTurn
			for _, t := range open {
				if t.ID != head {
					queued = append(queued, t)
				}
			}
			s.ackQueued(ctx, queued, acked, log)
		}
	}
}

func (s *Scheduler) ackQueued(ctx context.Context, queued []OpenTurn, acked map[string]bool, log *slog.Logger) {
	for _, t := range queued {
		if t.Acked || acked[t.ID] {
			continue
		}
		acked[t.ID] = true
		if err := s.Driver.Ack(ctx, t.ID); err != nil && ctx.Err() == nil {
			log.Warn("acknowledge queued turn", "turn", t.ID, "err", err)
		}
	}
}

func (s *Scheduler) waitApplied(ctx context.Context, applied <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-applied:
	case <-time.After(50 * time.Millisecond):
	}
}

// renew keeps the lease alive; losing it stops the worker so two
// processes never run one sender's turns at once.
func (s *Scheduler) renew(ctx context.Context, sender string, lost func(), log *slog.Logger) {
	t := time.NewTicker(s.Leases.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.Leases.Acquire(ctx, sender)
		if err != nil && ctx.Err() == nil {
			log.Error("scheduler: renew lease", "err", err)
			continue
		}
		if !ok {
			log.Error("scheduler: lease lost to another process; stopping this sender's work")
			lost()
			return
		}
	}
}
