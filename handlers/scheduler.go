package handlers

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Scheduler runs turns: one sender's turns one at a time in arrival order,
// different senders concurrently. A sender's turns run in the process that
// holds the sender's lease, so the order holds across several omega
// processes on one database; a process that dies loses its leases after
// one TTL and another (or its own restart) resumes its open turns.
//
// Turns come from two places: the turns read model (every open turn, in
// arrival order, whoever received it) and kicks from this process's own
// gateway, which name a turn the read model may not show yet. A kicked
// turn is run, or acknowledged if its sender is busy, without waiting for
// the read model.
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

	kick   chan kick
	mu     sync.Mutex
	active map[string]*worker // sender -> its running worker
	wg     sync.WaitGroup
}

type kick struct{ sender, turn string }

// worker is the state of one sender's running work that the scheduler's
// loop shares with it (guarded by Scheduler.mu).
type worker struct {
	wake   chan struct{}
	kicked []string // turns received here, oldest first, not yet done
}

// Kick tells the scheduler that turn was just received here for sender.
func (s *Scheduler) Kick(sender, turn string) {
	select {
	case s.kick <- kick{sender, turn}:
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
	s.kick = make(chan kick, 1024)
	s.active = map[string]*worker{}
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
		case k := <-s.kick:
			s.start(ctx, k.sender, k.turn)
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
		if seen[t.Sender] {
			// A turn queued behind another: its worker must acknowledge it.
			// Waking workers only for this keeps a busy system from
			// re-reading every sender's queue on every change.
			if !t.Acked && open[i-1].Sender == t.Sender {
				s.wakeWorker(t.Sender)
			}
			continue
		}
		seen[t.Sender] = true
		s.start(ctx, t.Sender, "")
	}
}

func (s *Scheduler) wakeWorker(sender string) {
	s.mu.Lock()
	w, ok := s.active[sender]
	s.mu.Unlock()
	if ok {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// start runs a sender's work here if no process does yet; turn, when set,
// is a turn of the sender just received here. Only Run's goroutine calls
// it, so two workers for one sender are never started.
func (s *Scheduler) start(ctx context.Context, sender, turn string) {
	s.mu.Lock()
	w, running := s.active[sender]
	if running && turn != "" {
		w.kicked = append(w.kicked, turn)
	}
	s.mu.Unlock()
	if running {
		if turn != "" {
			s.wakeWorker(sender)
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
		return // another process runs this sender; its sweeps will find the turn
	}
	w = &worker{wake: make(chan struct{}, 1)}
	if turn != "" {
		w.kicked = []string{turn}
	}
	s.mu.Lock()
	s.active[sender] = w
	s.mu.Unlock()
	s.wg.Add(1)
	go s.work(ctx, sender, w)
}

// pending returns the sender's turns to run, oldest first: the open turns
// the read model shows, then turns kicked here that it does not show yet.
// lagging reports a turn completed here that the read model still shows
// open: the next turn must wait, for its history must include that one.
func (s *Scheduler) pending(ctx context.Context, sender string, w *worker, done map[string]bool) (turns []OpenTurn, lagging bool, err error) {
	open, err := s.Read.SenderOpenTurns(ctx, sender)
	if err != nil {
		return nil, false, err
	}
	visible := map[string]bool{}
	for _, t := range open {
		visible[t.ID] = true
		if done[t.ID] {
			lagging = true
			continue
		}
		turns = append(turns, t)
	}
	s.mu.Lock()
	w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return done[id] || visible[id] })
	for _, id := range w.kicked {
		turns = append(turns, OpenTurn{ID: id, Sender: sender})
	}
	s.mu.Unlock()
	return turns, lagging, nil
}

// work runs one sender's turns in order while holding its lease.
func (s *Scheduler) work(ctx context.Context, sender string, w *worker) {
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
		// between was added to our list; hand it back so that a fresh
		// worker, holding a fresh lease, runs it.
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if err := s.Leases.Release(rctx, sender); err != nil {
			log.Warn("scheduler: release lease", "err", err)
		}
		s.mu.Lock()
		delete(s.active, sender)
		left := w.kicked
		s.mu.Unlock()
		for _, id := range left {
			s.Kick(sender, id)
		}
	}()

	applied := s.subscribe(ctx)
	done := map[string]bool{}  // completed here; the read model may lag
	acked := map[string]bool{} // only this worker touches it
	backoff := time.Second
	for ctx.Err() == nil {
		turns, lagging, err := s.pending(ctx, sender, w, done)
		if err != nil {
			log.Error("scheduler: read sender turns", "err", err)
			return
		}
		if lagging {
			s.waitApplied(ctx, applied)
			continue
		}
		if len(turns) == 0 {
			return
		}
		head := turns[0]
		s.ackQueued(ctx, turns[1:], acked, log)
		errc := make(chan error, 1)
		go func() { errc <- s.Driver.Run(ctx, head.ID) }()
		if err := s.waitTurn(ctx, sender, w, head.ID, errc, done, acked, log); err != nil {
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

// waitTurn waits for the running turn, acknowledging the messages that
// queue up behind it meanwhile.
func (s *Scheduler) waitTurn(ctx context.Context, sender string, w *worker, head string, errc <-chan error, done, acked map[string]bool, log *slog.Logger) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-w.wake:
			// A message sent right after a reply can arrive while the
			// finished turn's goroutine is still returning: it is not
			// queued behind anything, so it gets no acknowledgement.
			if s.completed(ctx, head) {
				continue
			}
			turns, _, err := s.pending(ctx, sender, w, done)
			if err != nil {
				continue
			}
			s.ackQueued(ctx, slices.DeleteFunc(turns, func(t OpenTurn) bool { return t.ID == head }), acked, log)
		}
	}
}

// completed reports whether the turn's stream records its completion.
func (s *Scheduler) completed(ctx context.Context, turn string) bool {
	evs, err := s.Driver.Store.Load(ctx, domain.TurnStream(turn), 1)
	return err == nil && len(evs) > 0 && evs[len(evs)-1].Type == "TurnCompleted"
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
