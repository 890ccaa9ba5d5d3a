package messaging

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// Announcer carries "a command was published" between processes:
// LISTEN/NOTIFY on PostgreSQL (eventstore/postgres).
type Announcer interface {
	// CommandSignals receives a signal for every announced command.
	CommandSignals(ctx context.Context) <-chan struct{}
	// AnnounceCommand tells every process that a command was published.
	AnnounceCommand(ctx context.Context) error
}

// announcingPublisher announces each command it published, so that the
// subscribers (in this process and the others) query at once.
type announcingPublisher struct {
	message.Publisher
	announcer Announcer
	logger    *slog.Logger
}

func (p announcingPublisher) Publish(topic string, msgs ...*message.Message) error {
	if err := p.Publisher.Publish(topic, msgs...); err != nil {
		return err
	}
	// The command is durable: a lost announcement only costs a poll.
	if err := p.announcer.AnnounceCommand(context.Background()); err != nil {
		p.logger.Warn("announce command; it runs at the next poll", "topic", topic, "err", err)
	}
	return nil
}

// wakeup is a broadcast that can be waited on by any number of
// goroutines: fire closes the current channel and starts a new one.
type wakeup struct {
	mu   sync.Mutex
	ch   chan struct{}
	last time.Time // when fire last ran
}

func newWakeup() *wakeup { return &wakeup{ch: make(chan struct{})} }

// wait returns a channel closed at the next fire, and when the last fire
// was.
func (w *wakeup) wait() (<-chan struct{}, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch, w.last
}

func (w *wakeup) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch, w.last = make(chan struct{}), time.Now()
}

// settleWindow is how long after an announcement an empty query is
// repeated quickly: watermill-sql shows a row only once every transaction
// that began before it has ended (its visibility check is database-wide),
// so the first query after a wake-up may come back empty.
const (
	settleWindow = 2 * time.Second
	settlePoll   = 25 * time.Millisecond
)

// wakeOnAnnounce is watermill-sql's backoff manager for an empty poll:
// instead of returning the poll interval (the subscriber then sleeps
// without a way to wake it) it waits itself, until a command is announced
// or the poll interval has passed, and lets the subscriber query at once.
// The poll stays as a safety net for a lost announcement. A command
// announced between the subscriber's query and this wait is seen at the
// next poll, as before, unless the announcement is recent (settleWindow).
type wakeOnAnnounce struct {
	next wsql.BackoffManager
	wake *wakeup
	poll time.Duration
	done <-chan struct{}
}

func (w wakeOnAnnounce) HandleError(logger watermill.LoggerAdapter, noMsg bool, err error) time.Duration {
	if err != nil || !noMsg {
		return w.next.HandleError(logger, noMsg, err)
	}
	woken, last := w.wake.wait()
	if time.Since(last) < settleWindow {
		return settlePoll
	}
	t := time.NewTimer(w.poll)
	defer t.Stop()
	select {
	case <-woken:
	case <-t.C:
	case <-w.done:
	}
	return 0
}

// followAnnouncements fires wake on each announced command until ctx ends.
func followAnnouncements(ctx context.Context, a Announcer, wake *wakeup) {
	signals := a.CommandSignals(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-signals:
			wake.fire()
		}
	}
}
