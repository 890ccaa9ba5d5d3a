package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/omega-gateway/omega/eventstore"
)

const (
	notifyChannel = "omega_events"
	// commandChannel tells every process that a command was published on
	// the command bus, so that its subscriber queries now instead of at
	// its next poll.
	commandChannel = "omega_commands"
	// notifyWindow coalesces NOTIFYs: a signal waits this long for a
	// read of the log to carry it (a busy process reads within a few
	// milliseconds of most of its appends: its own message, to place it
	// in the order; the applier, at its pace) before the notifier sends
	// it itself, so a process sends at most one per window. The others
	// read what it signals at their lazy pace (eventstore.TailLazy)
	// unless one of their turns waits, so a signal sooner than that
	// mostly bought nothing.
	notifyWindow = eventstore.TailLazy
)

// notifySQL sends a change signal in a transaction of its own that does
// not wait for its commit to reach the disk: a signal lost in a crash
// costs nothing (readers poll), while a NOTIFY takes a transaction id, so
// a transaction waiting for its flush held back the log's horizon (and
// every reader awaiting a commit behind it) for as long.
const notifySQL = `SELECT pg_notify($1, $2) FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async`

// notifier sends pg_notify after commits, outside the append
// transactions: with the next read of the log this process makes (take),
// or else in a transaction of its own notifyWindow after the first append
// it signals.
type notifier struct {
	db       *sql.DB
	log      *slog.Logger
	instance string
	wake     chan struct{}

	mu      sync.Mutex
	pending bool      // appends not signalled yet
	since   time.Time // when the pending signal was asked for
}

func newNotifier(db *sql.DB, log *slog.Logger, instance string) *notifier {
	return &notifier{db: db, log: log, instance: instance, wake: make(chan struct{}, 1)}
}

// signal asks for a NOTIFY without blocking; signals coalesce.
func (n *notifier) signal() {
	n.mu.Lock()
	if !n.pending {
		n.pending, n.since = true, time.Now()
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take hands the pending signal, if any, to a read about to run, which
// then sends it (readSignalled): true when it must.
func (n *notifier) take() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.pending {
		return false
	}
	n.pending = false
	return true
}

// due reports whether the notifier must send the pending signal now, or
// how long it must wait before it may (0: nothing pending).
func (n *notifier) due() (send bool, wait time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.pending {
		return false, 0
	}
	if left := notifyWindow - time.Since(n.since); left > 0 {
		return false, left
	}
	n.pending = false
	return true, 0
}

// flushTimeout bounds the last signal's send when the store closes.
const flushTimeout = time.Second

// flush sends the pending signal, if any, at once: a process that stops
// (a CLI command right after its append) would otherwise leave the
// others to find its last appends by polling.
func (n *notifier) flush() {
	if !n.take() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	n.send(ctx)
}

// send sends one signal in a transaction of its own.
func (n *notifier) send(ctx context.Context) {
	// The payload names this process so its own listener can skip signals
	// the local broadcaster already delivered.
	if _, err := n.db.ExecContext(ctx, notifySQL, notifyChannel, n.instance); err != nil && ctx.Err() == nil {
		n.log.Warn("notify other processes of new events", "err", err)
	}
}

func (n *notifier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		for {
			send, wait := n.due()
			if !send && wait == 0 {
				break
			}
			if send {
				n.send(ctx)
				continue
			}
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}

// listen turns notifications from other processes into local signals.
func (s *Store) listen(ctx context.Context, instance string) {
	go func() {
		// Listen blocks until the listener is connected; Close unblocks it.
		for _, ch := range []struct{ name, lost string }{
			{notifyChannel, "listen for new events; other processes' appends will be seen by polling only"},
			{commandChannel, "listen for commands; commands will be seen by polling only"},
			{checkpointChannel, "listen for read-model checkpoints; other processes' progress will be seen by polling only"},
		} {
			if err := s.listener.Listen(ch.name); err != nil && ctx.Err() == nil {
				s.log.Error(ch.lost, "err", err)
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-s.listener.NotificationChannel():
			if !ok {
				return
			}
			s.dispatch(n, instance)
		}
	}
}

// dispatch hands one notification to those waiting for its kind.
func (s *Store) dispatch(n *pq.Notification, instance string) {
	switch {
	case n == nil:
		// The connection was re-established: anything could have been
		// missed meanwhile.
		s.unread.Notify()
		s.local.Notify()
		s.commands.Notify()
		s.watchers.notify(eventstore.CheckpointNotice{Missed: true})
	case n.Channel == checkpointChannel:
		if notice, ours := parseCheckpointNotice(s.schema, n.Extra); ours {
			s.watchers.notify(notice)
		}
	case n.Channel == commandChannel:
		s.commands.Notify()
	case n.Extra != instance:
		s.unread.Notify()
		s.local.Notify()
	}
}

func (s *Store) listenerEvent(ev pq.ListenerEventType, err error) {
	switch ev {
	case pq.ListenerEventDisconnected:
		s.log.Warn("event listener lost its connection; reconnecting", "err", err)
	case pq.ListenerEventConnectionAttemptFailed:
		s.log.Warn("event listener reconnect failed; retrying with backoff", "err", err)
	case pq.ListenerEventReconnected:
		s.log.Info("event listener reconnected")
	}
}

// CommandSignals receives a signal whenever any process (this one
// included) announces a published command, and after the listener
// reconnects (a signal may have been lost), until ctx ends.
func (s *Store) CommandSignals(ctx context.Context) <-chan struct{} {
	return s.commands.Subscribe(ctx)
}

// AnnounceCommand tells every process that a command was published. It
// runs after the publish committed, so a woken subscriber finds it.
func (s *Store) AnnounceCommand(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "SELECT pg_notify($1, '')", commandChannel); err != nil {
		return fmt.Errorf("announce command: %w", err)
	}
	return nil
}
