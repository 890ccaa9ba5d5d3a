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

	kick   chan string // senders with a new turn received here
	mu     sync.Mutex
	active map[string]chan struct{} // sender -> wake its worker
	wg     sync.WaitGroup
}

// Kick tells the scheduler that a turn of sender was just received here,
// so the sender's work can start without waiting for a sweep.
func (s *Scheduler) Kick(sender string) {
	select {
	case s.kick <- sender:
	default: // full: the next sweep finds the turn
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
	s.kick = make(chan string, 1024)
	s.active = map[string]chan struct{}{}
	if s.Sweep <= 0 {
		s.Sweep = time.Second
	}
}

// sweepEvery bounds how often read-model changes trigger a sweep: they
// matter only for turns received by another process (those received here
// are kicked), and every projection batch signals one.
const sweepEvery = 100 * time.Millisecond

// Run schedules until ctx ends, then waits for running turns to stop.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.Sweep)
	defer t.Stop()
	applied := s.subscribe(ctx)
	var last time.Time
	var later <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return ctx.Err()
		case sender := <-s.kick:
			s.start(ctx, sender, true)
			continue
		case <-applied:
			if wait := sweepEvery - time.Since(last); wait > 0 {
				if later == nil {
					later = time.After(wait)
				}
				continue
			}
		case <-later:
		case <-t.C:
		}
		later, last = nil, time.Now()
		s.sweep(ctx)
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
		if !running {
			s.start(ctx, t.Sender, false)
		}
	}
}

// start runs a sender's work here if no process does yet. kicked says the
// sender has a turn the read model may not show yet.
func (s *Scheduler) start(ctx context.Context, sender string, kicked bool) {
	s.mu.Lock()
	wake, running := s.active[sender]
	s.mu.Unlock()
	if running {
		if kicked {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		return
	}
	ok, err := s.Leases.Acquire(ctx, sender)
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("scheduler: acquire lease", "sender", sender, "err", err)
		}
		return
	}
	if !ok {
		return // another process runs this sender
	}
	wake = make(chan struct{}, 1)
	s.mu.Lock()
	s.active[sender] = wake
	s.mu.Unlock()
	s.wg.Add(1)
	go s.work(ctx, sender, wake, kicked)
}

// kickGrace is how long a kicked worker waits for the read model to show
// the turn it was kicked for.
const kickGrace = 5 * time.Second

// work runs one sender's open turns in order while holding its lease.
func (s *Scheduler) work(ctx context.Context, sender string, wake chan struct{}, kicked bool) {
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
		// Release first, then leave the active set: a kick that came in
		// between found us running and left a wake, which we hand back so
		// a fresh worker (holding a fresh lease) picks the turn up.
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if err := s.Leases.Release(rctx, sender); err != nil {
			log.Warn("scheduler: release lease", "err", err)
		}
		s.mu.Lock()
		delete(s.active, sender)
		s.mu.Unlock()
		select {
		case <-wake:
			s.Kick(sender)
		default:
		}
	}()

	applied := s.subscribe(ctx)
	// expect: a turn was received here that the read model may not show
	// yet (we were kicked, or woken while busy).
	var expect time.Time
	if kicked {
		expect = time.Now()
	}
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
			select {
			case <-wake:
				expect = time.Now()
			default:
			}
			if !expect.IsZero() && time.Since(expect) < kickGrace {
				s.waitApplied(ctx, applied)
				continue
			}
			return
		}
		expect = time.Time{}
		head := pending[0]
		s.ackQueued(ctx, pending[1:], acked, log)
		errc := make(chan error, 1)
		go func() { errc <- s.Driver.Run(ctx, head.ID) }()
		var woken bool
		woken, err = s.waitTurn(ctx, sender, head.ID, errc, wake, acked, log)
		if woken {
			expect = time.Now()
		}
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
func (s *Scheduler) waitTurn(ctx context.Context, sender, head string, errc <-chan error, wake chan struct{}, acked map[string]bool, log *slog.Logger) (woken bool, err error) {
	for {
		select {
		case err := <-errc:
			return woken, err
		case <-wake:
			woken = true
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
