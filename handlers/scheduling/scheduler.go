// Package scheduling runs the turns of each chat (the conversation they
// join: a sender's private chat, or a group) one at a time, in arrival
// order, on whichever process holds the chat's lease.
package scheduling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/projections"
)

// Scheduler runs turns: one chat's turns one at a time in arrival order,
// different chats concurrently. A chat is the conversation and provider
// session its turns share (turn.MessageReceived.Chat): a private chat's
// key is its sender's, a group's is the group's own, so two members
// writing in a group at once never run two turns of its conversation side
// by side. A chat's turns run in the process that
// holds the chat's lease, so the order holds across several omega
// processes on one database; a process that dies loses its leases after
// one TTL and another (or its own restart) resumes its open turns.
//
// Turns come from two places: the turns read model (every open turn, in
// arrival order, whoever received it) and kicks from this process's own
// gateway, which name a turn the read model may not show yet. A kicked
// turn is run, or acknowledged if its chat is busy, without waiting for
// the read model to apply it: the few events after the read model's
// checkpoint are read from the log instead, so that a turn of the same
// chat received earlier by another process still runs first (pending).
type Scheduler struct {
	driver   *pipeline.Driver
	turns    TurnRunner
	leases   *Leases
	read     *projections.Queries
	channels []string
	applied  func(ctx context.Context) <-chan struct{}
	through  func() (int64, bool)
	logger   *slog.Logger
	sweepGap time.Duration
	window   time.Duration // message coalescing (0: off)

	kick   chan kick
	mu     sync.Mutex
	active map[string]*worker // chat -> its running worker
	// recent are the turns completed here lately, oldest first, kept
	// beyond the worker that ran them (guarded by mu): a worker that
	// starts while the read model still shows its chat's previous turn
	// open must not take that turn for one still ahead of the new message
	// (and acknowledge the message as queued behind it).
	recent []doneTurn
	// busy are the chats whose lease another process was lately seen
	// holding, each with when to look again (guarded by mu; see busy.go).
	busy  map[string]time.Time
	swept bool // a sweep has run (only Run's goroutine touches it)
	wg    sync.WaitGroup

	// The open turns of every chat as the read model last showed them,
	// shared by all workers and kept current from the log (see queue.go).
	qmu   sync.Mutex
	queue *queueSnapshot
	gen   atomic.Uint64
	moved eventstore.Broadcaster // signalled after the read model moved
	chats chatCache              // turn -> chat, of messages read from the log
	// The last scan of the log behind the read model (see unapplied.go),
	// valid while tailGen, counted by the relay at each signal, holds.
	scanMu  sync.Mutex
	scan    *unappliedScan
	tailGen atomic.Uint64
}

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

type kick struct{ chat, turn string }

// TurnRunner runs a turn where the router's middleware guards it
// (messaging.Turns): it returns a *messaging.PoisonedError when the
// router gave up on the turn.
type TurnRunner interface {
	Run(ctx context.Context, turnID string) error
}

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

// Kick tells the scheduler that turn was just received here for chat (the
// key of turn.MessageReceived.Chat).
func (s *Scheduler) Kick(chat, tn string) {
	select {
	case s.kick <- kick{chat, tn}:
	default: // full: the next sweep finds the turn
	}
}

func (s *Scheduler) subscribe(ctx context.Context) <-chan struct{} {
	if s.applied == nil {
		return nil
	}
	return s.moved.Subscribe(ctx)
}

// SchedulerConfig are a scheduler's collaborators; Applied and Sweep are
// optional.
type SchedulerConfig struct {
	Driver   *pipeline.Driver
	Turns    TurnRunner
	Leases   *Leases
	Read     *projections.Queries
	Channels []string // channels this process can deliver to
	// Applied subscribes to signals that the read models have moved on
	// (nil: only the sweep finds turns received by other processes).
	Applied func(ctx context.Context) <-chan struct{}
	// AppliedThrough, when set, is the position the turns read model was
	// last moved to by the signalling engine: a signal for a batch that
	// changed no queue then costs no read of the queues.
	AppliedThrough func() (int64, bool)
	Logger         *slog.Logger
	// Sweep is how often open turns are looked for without a signal
	// (default 1 s).
	Sweep time.Duration
	// CoalesceWindow merges a sender's messages that follow each other
	// within it into one turn (OMEGA_COALESCE_WINDOW; 0: off).
	CoalesceWindow time.Duration
}

// NewScheduler checks the collaborators and returns a scheduler ready
// for Kick and Run.
func NewScheduler(c SchedulerConfig) (*Scheduler, error) {
	if c.Driver == nil || c.Turns == nil || c.Leases == nil || c.Read == nil || c.Logger == nil {
		return nil, errors.New("scheduling: scheduler needs a driver, a turn runner, leases, a read model and a logger")
	}
	if c.Driver.Replied == nil {
		// The driver marks the turns it answered there; the scheduler only
		// reads them (pipeline.NewDriver makes the set).
		return nil, errors.New("scheduling: the driver has no replied-turns set (build it with pipeline.NewDriver)")
	}
	if c.Sweep <= 0 {
		c.Sweep = time.Second
	}
	return &Scheduler{
		driver: c.Driver, turns: c.Turns, leases: c.Leases, read: c.Read, channels: c.Channels, applied: c.Applied, through: c.AppliedThrough,
		logger: c.Logger, sweepGap: c.Sweep, window: c.CoalesceWindow, kick: make(chan kick, 1024), active: map[string]*worker{}, busy: map[string]time.Time{},
	}, nil
}

// sweepEvery bounds how often read-model changes trigger a sweep: they
// matter only for turns received by another process (those received here
// are kicked), and every projection batch signals one.
const sweepEvery = 100 * time.Millisecond

// Run schedules until ctx ends, then waits for running turns to stop.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.sweepGap)
	defer t.Stop()
	applied := s.subscribe(ctx)
	go s.relay(ctx)
	var last time.Time
	var later <-chan time.Time
	// A restarted process owns the leases it held before (its identity is
	// kept), so the turns it left open can resume at once.
	s.sweep(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.renewLeases(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			s.wg.Wait()
			return ctx.Err()
		case k := <-s.kick:
			s.start(ctx, k.chat, k.turn)
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
	var heads []projections.OpenTurn
	var queued []string // chats with a turn behind the head not acknowledged
	err := s.withQueue(ctx, func(q *queueSnapshot) {
		for chat, ts := range q.byChat {
			if !slices.Contains(s.channels, ts[0].Channel) {
				continue
			}
			heads = append(heads, ts[0])
			if slices.ContainsFunc(ts[1:], func(t projections.OpenTurn) bool { return !t.Acked }) {
				queued = append(queued, chat)
			}
		}
	})
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("scheduler: read open turns", "err", err)
		}
		return
	}
	// A turn queued behind another: its worker must acknowledge it. Waking
	// workers only for this keeps a busy system from looking at every
	// chat's queue on every change.
	for _, chat := range queued {
		s.wakeWorker(chat)
	}
	slices.SortFunc(heads, func(a, b projections.OpenTurn) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
	idle := heads[:0]
	for _, t := range heads {
		if s.running(t.Chat) {
			s.start(ctx, t.Chat, "")
			continue
		}
		idle = append(idle, t)
	}
	chats, err := s.adoptable(ctx, idle, !s.swept)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("scheduler: read chat leases", "err", err)
		}
		return
	}
	s.swept = true
	for _, chat := range chats {
		s.start(ctx, chat, "")
	}
}

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

// pending returns the chat's turns to run, oldest first, and whether the
// worker must wait for the read model before starting the first of them.
//
// The order comes from the log, never from when a kick arrived. The read
// model shows the chat's turns received up to its checkpoint; when it
// shows none left to run and turns were kicked here, the events after the
// checkpoint are read from the log itself, so a turn that another process
// received before a turn kicked here is run first even while this
// process's read model has not applied it. A kicked turn that read has not
// reached (on PostgreSQL an earlier transaction may still be committing)
// is only acknowledged, never started.
//
// wait is true when the next turn cannot start yet: a turn completed here
// or after the checkpoint is not shown completed (the next turn's history
// must include it), or no kicked turn has been reached in the log.
func (s *Scheduler) pending(ctx context.Context, chat string, w *worker, done map[string]bool) (turns []projections.OpenTurn, wait bool, err error) {
	open, applied, err := s.chatQueue(ctx, chat)
	if err != nil {
		return nil, false, err
	}
	visible := map[string]bool{}
	for _, t := range open {
		visible[t.ID] = true
		if done[t.ID] {
			wait = true
			continue
		}
		turns = append(turns, t)
	}
	s.mu.Lock()
	w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return done[id] || visible[id] })
	kicked := slices.Clone(w.kicked)
	s.mu.Unlock()
	if wait || len(turns) > 0 || len(kicked) == 0 {
		return append(turns, kickedTurns(chat, kicked, nil)...), wait, nil
	}
	tail, settled, err := s.unapplied(ctx, chat, applied, done)
	if err != nil {
		return nil, false, err
	}
	reached := map[string]bool{}
	for _, t := range tail {
		reached[t.ID] = true
	}
	rest, err := s.dropCompleted(ctx, w, kickedTurns(chat, kicked, reached), done)
	if err != nil {
		return nil, false, err
	}
	return append(tail, rest...), !settled || (len(tail) == 0 && len(rest) > 0), nil
}

// dropCompleted takes out of the worker's kicked turns those whose stream
// records their completion: a turn received here that another process
// ran (it held the lease when the turn arrived) is neither open in the
// read model nor after its checkpoint, and without this check the worker
// would wait for it forever, holding the chat's lease. They count as
// done, so the next turn still waits for the read model to show them
// completed.
func (s *Scheduler) dropCompleted(ctx context.Context, w *worker, kicked []projections.OpenTurn, done map[string]bool) ([]projections.OpenTurn, error) {
	var rest []projections.OpenTurn
	for _, t := range kicked {
		completed, err := s.completedErr(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		if !completed {
			rest = append(rest, t)
			continue
		}
		done[t.ID] = true
		s.mu.Lock()
		w.kicked = slices.DeleteFunc(w.kicked, func(id string) bool { return id == t.ID })
		s.mu.Unlock()
	}
	return rest, nil
}

func kickedTurns(chat string, kicked []string, skip map[string]bool) []projections.OpenTurn {
	var out []projections.OpenTurn
	for _, id := range kicked {
		if !skip[id] {
			out = append(out, projections.OpenTurn{ID: id, Chat: chat})
		}
	}
	return out
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
		turns, wait, err := s.pending(ctx, chat, w, done)
		if err != nil {
			if ctx.Err() == nil {
				log.Error("scheduler: read chat turns", "err", err)
			}
			return
		}
		if wait {
			s.waitApplied(ctx, applied)
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
		s.ackQueued(ctx, turns[1:], acked, func() bool { return s.driver.Replied.Has(head.ID) }, log)
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

// runTurn runs a turn through the router's turn handler. A turn the
// router gave up on (poisoned, recorded as MessagePoisoned) is abandoned
// with a failure notice to its sender, so that it does not block the
// chat's later turns; an error is left for the caller to retry.
func (s *Scheduler) runTurn(ctx context.Context, chat string, w *worker, head string, done, acked map[string]bool, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- s.turns.Run(ctx, head) }()
	err := s.waitTurn(ctx, chat, w, head, errc, done, acked, log)
	var poisoned *messaging.PoisonedError
	if errors.As(err, &poisoned) && ctx.Err() == nil {
		return s.driver.Abandon(ctx, head, poisoned.Reason)
	}
	return err
}

// waitTurn waits for the running turn, acknowledging the messages that
// queue up behind it meanwhile.
func (s *Scheduler) waitTurn(ctx context.Context, chat string, w *worker, head string, errc <-chan error, done, acked map[string]bool, log *slog.Logger) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-w.wake:
			// A message sent right after a reply can arrive before the
			// turn's completion is recorded: it is not queued behind
			// anything, so it gets no acknowledgement. The driver marks
			// the turn replied before the reply goes out, so whatever
			// the timing, a message written after reading the reply
			// finds the mark (or, later, the completion in the log).
			answered := func() bool { return s.driver.Replied.Has(head) }
			if answered() {
				log.Debug("scheduler: message after the reply; not acknowledged", "turn", head)
				continue
			}
			turns, _, err := s.pending(ctx, chat, w, done)
			if err != nil {
				continue
			}
			queued := slices.DeleteFunc(turns, func(t projections.OpenTurn) bool { return t.ID == head || t.Acked || acked[t.ID] })
			if len(queued) == 0 {
				continue // a wake with nothing new to acknowledge
			}
			if s.completed(ctx, head) {
				log.Debug("scheduler: message after the reply; not acknowledged", "turn", head)
				continue
			}
			s.ackQueued(ctx, queued, acked, answered, log)
		}
	}
}

// completed reports whether the turn's stream records its completion.
func (s *Scheduler) completed(ctx context.Context, tn string) bool {
	ok, err := s.completedErr(ctx, tn)
	return err == nil && ok
}

// completedErr is completed with the read's error.
func (s *Scheduler) completedErr(ctx context.Context, tn string) (bool, error) {
	evs, err := s.driver.Store.Load(ctx, domain.TurnStream(tn), 1)
	if err != nil {
		return false, fmt.Errorf("read turn %s: %w", tn, err)
	}
	return len(evs) > 0 && evs[len(evs)-1].Type == turn.TurnCompleted{}.EventType(), nil
}

// ackQueued acknowledges the queued turns not acknowledged yet; it stops
// once answered reports that the turn ahead of them has replied. Asked
// right before each acknowledgement, after the queued message is on
// record, it makes the rule hold whatever the timing: a message is only
// acknowledged if the turn ahead was still unanswered after it arrived.
func (s *Scheduler) ackQueued(ctx context.Context, queued []projections.OpenTurn, acked map[string]bool, answered func() bool, log *slog.Logger) {
	for _, t := range queued {
		if t.Acked || acked[t.ID] {
			continue
		}
		if answered() {
			return
		}
		acked[t.ID] = true
		if err := s.driver.Ack(ctx, t.ID); err != nil && ctx.Err() == nil {
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
