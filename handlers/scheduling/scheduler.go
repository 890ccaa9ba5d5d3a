// Package scheduling runs the turns of each chat (the conversation they
// join: a sender's private chat, or a group) one at a time, in arrival
// order, on whichever process holds the chat's lease.
package scheduling

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/handlers/scheduling/openq"
	"github.com/omega-gateway/omega/internal/twogen"
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
	leases   *lease.Leases
	read     *projections.Queries
	channels []string
	applied  func(ctx context.Context) <-chan struct{}
	through  func() (int64, bool)
	await    func() (done func())
	logger   *slog.Logger
	sweepGap time.Duration
	window   time.Duration // message coalescing (0: off)
	looks    atomic.Int64  // how often a worker looked at its chat's queue (Looks)

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
	// started is when Run began: open turns received before it are a
	// restarted process's own to resume at once.
	started time.Time
	wg      sync.WaitGroup

	// The open turns of every chat as the read model last showed them,
	// shared by all workers and kept current from the log (see queue.go).
	qmu   sync.Mutex
	queue *openq.Snapshot
	gen   atomic.Uint64
	moved eventstore.Broadcaster      // signalled after the read model moved
	chats *twogen.Map[string, string] // turn -> chat, of messages read from the log (chatOf)
	// The last scan of the log behind the read model (see unapplied.go),
	// valid while tailGen, counted by the relay at each signal, holds.
	scanMu  sync.Mutex
	scan    *unappliedScan
	tailGen atomic.Uint64
}

type kick struct{ chat, turn string }

// TurnRunner runs a turn where the router's middleware guards it
// (messaging.Turns): it returns a *messaging.PoisonedError when the
// router gave up on the turn.
type TurnRunner interface {
	Run(ctx context.Context, turnID string) error
}

// Kick tells the scheduler that turn was just received here for chat (the
// key of turn.MessageReceived.Chat).
func (s *Scheduler) Kick(chat, tn string) {
	select {
	case s.kick <- kick{chat, tn}:
	default: // full: the next sweep finds the turn
	}
}

// Looks is how many times the scheduler's workers have looked at their
// chats' queues for a turn to run: a cost per turn that must not grow
// with the number of messages waiting.
func (s *Scheduler) Looks() int64 { return s.looks.Load() }

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
	Leases   *lease.Leases
	Read     *projections.Queries
	Channels []string // channels this process can deliver to
	// Applied subscribes to signals that the read models have moved on
	// (nil: only the sweep finds turns received by other processes).
	Applied func(ctx context.Context) <-chan struct{}
	// AppliedThrough, when set, is the position the turns read model was
	// last moved to by the signalling engine: a signal for a batch that
	// changed no queue then costs no read of the queues.
	AppliedThrough func() (int64, bool)
	// Await, when set, is called while a turn waits for the read models
	// to show what the log holds; the wait ends with done.
	Await  func() (done func())
	Logger *slog.Logger
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
		driver: c.Driver, turns: c.Turns, leases: c.Leases, read: c.Read, channels: c.Channels, applied: c.Applied, through: c.AppliedThrough, await: c.Await,
		logger: c.Logger, sweepGap: c.Sweep, window: c.CoalesceWindow, kick: make(chan kick, 1024), active: map[string]*worker{}, busy: map[string]time.Time{},
		chats: twogen.New[string, string](chatsKept),
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
	s.started = time.Now()
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
	err := s.withQueue(ctx, func(q *openq.Snapshot) {
		q.Each(func(chat string, ts []projections.OpenTurn) {
			if !slices.Contains(s.channels, ts[0].Channel) {
				return
			}
			heads = append(heads, ts[0])
			if slices.ContainsFunc(ts[1:], func(t projections.OpenTurn) bool { return !t.Acked }) {
				queued = append(queued, chat)
			}
		})
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
