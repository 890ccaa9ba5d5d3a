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
	// notifyWindow coalesces NOTIFYs: at most one per process per window.
	notifyWindow = 25 * time.Millisecond
	// notifyGrace is how long past the window a notification waits for
	// an append to carry it (notifier.carry).
	notifyGrace = 5 * time.Millisecond
)

// notifier tells other processes of this one's commits: at most one
// notification per notifyWindow, carried by an append when one comes
// after the window has passed (carry), else sent after the commit in a
// statement of its own.
type notifier struct {
	db       *sql.DB
	log      *slog.Logger
	instance string
	pending  chan struct{}

	mu   sync.Mutex
	last time.Time // when the last notification was sent or claimed
}

func newNotifier(db *sql.DB, log *slog.Logger, instance string) *notifier {
	return &notifier{db: db, log: log, instance: instance, pending: make(chan struct{}, 1)}
}

// signal asks for a NOTIFY without blocking; signals coalesce.
func (n *notifier) signal() {
	select {
	case n.pending <- struct{}{}:
	default:
	}
}

// carry reports whether the append about to run carries the notification
// (appendNotifySQL): none was sent within the window. A commit that does
// not carry one signals, and the notifier sends one once the window has
// passed, so every commit is announced within a window of it; a busy
// process's notifications then cost no transaction of their own.
func (n *notifier) carry() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	if now.Sub(n.last) < notifyWindow {
		return false
	}
	n.last = now
	return true
}

// due returns how long until the notifier sends a notification asked for
// now: the window after the last one, and notifyGrace more, in which an
// append that starts may carry it instead.
func (n *notifier) due() time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return max(0, time.Until(n.last.Add(notifyWindow+notifyGrace)))
}

// claim counts a notification as sent now, unless an append claimed one
// after asked: that append's commit, later than the commits that asked,
// tells of them.
func (n *notifier) claim(asked time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last.After(asked) {
		return false
	}
	n.last = time.Now()
	return true
}

func (n *notifier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.pending:
		}
		asked := time.Now()
		if d := n.due(); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		if !n.claim(asked) {
			continue
		}
		// The payload names this process so its own listener can skip
		// signals the local broadcaster already delivered.
		if _, err := n.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, n.instance); err != nil && ctx.Err() == nil {
			n.log.Warn("notify other processes of new events", "err", err)
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
