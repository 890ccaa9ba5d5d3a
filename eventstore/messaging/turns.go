package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
)

// RunTurn asks the turn handler to drive one turn to its end.
type RunTurn struct {
	TurnID string `json:"turn_id"`
}

// CommandName names the message like the other commands.
func (RunTurn) CommandName() string { return "RunTurn" }

const (
	turnTopic   = "omega_turns"
	turnHandler = "turns"
	// metaDeferred is set by the handler when it stops short of the end
	// without failing for good (the context ended, the database is away):
	// the message is acked so that the router neither retries nor poisons
	// it, and the scheduler tries again with its own backoff.
	metaDeferred = "omega_deferred"
)

// PoisonedError says the router gave up on a turn: its handler kept
// failing through the retries and the message went to the poison queue
// (recorded as MessagePoisoned).
type PoisonedError struct {
	TurnID string
	Reason string
}

func (e *PoisonedError) Error() string {
	return fmt.Sprintf("turn %s poisoned: %s", e.TurnID, e.Reason)
}

// TurnFunc drives a turn; Transient tells whether its error may pass by
// waiting (a database outage) rather than by retrying at once.
type (
	TurnFunc  func(ctx context.Context, turnID string) error
	Transient func(ctx context.Context, turnID string, err error) bool
)

// Turns hands turns to the router's turn handler, so that the router's
// middleware (poison queue, retry with backoff, recoverer, metrics) wraps
// every turn run, and waits for each.
type Turns struct {
	queue *turnQueue
}

// AddTurnHandler registers the turn handler on the router and returns
// what the scheduler publishes turns through. Call it before the router
// runs.
func (b *Buses) AddTurnHandler(run TurnFunc, transient Transient) (*Turns, error) {
	if run == nil || transient == nil {
		return nil, errors.New("messaging: the turn handler needs a run and a transient function")
	}
	q := &turnQueue{subscribed: make(chan struct{}), closing: make(chan struct{})}
	handle := func(msg *message.Message) error {
		var cmd RunTurn
		if err := json.Unmarshal(msg.Payload, &cmd); err != nil {
			return fmt.Errorf("decode RunTurn: %w", err)
		}
		ctx := msg.Context()
		err := run(ctx, cmd.TurnID)
		if why := deferral(ctx, cmd.TurnID, err, transient); why != "" {
			msg.Metadata.Set(metaDeferred, why)
			return nil
		}
		return err
	}
	b.Router.AddConsumerHandler(turnHandler, turnTopic, q, handle)
	return &Turns{queue: q}, nil
}

// deferral says why a failed turn is left for the scheduler to retry
// later rather than to the router's retries and poison queue: the context
// ended (shutdown, lease lost) or the failure is transient. "" means it
// is not deferred.
func deferral(ctx context.Context, turnID string, err error, transient Transient) string {
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return ctx.Err().Error()
	case transient(ctx, turnID, err):
		return err.Error()
	}
	return ""
}

// afterStop bounds the wait for a turn's handler once the caller's
// context has ended: the handler sees the same context and stops at its
// next step.
const afterStop = 10 * time.Second

// Run publishes RunTurn for turnID and waits until the handler is done
// with it. It returns nil when the turn ran, a *PoisonedError when the
// router gave up on it, or the error that deferred it (the context's or a
// transient one) for the caller to retry later.
func (t *Turns) Run(ctx context.Context, turnID string) error {
	payload, err := json.Marshal(RunTurn{TurnID: turnID})
	if err != nil {
		return err
	}
	msg := message.NewMessage(watermill.NewUUID(), payload)
	msg.Metadata.Set(MetaName, RunTurn{}.CommandName())
	msg.Metadata.Set("correlation_id", turnID)
	msg.SetContext(ctx)
	if err := t.queue.deliver(ctx, msg); err != nil {
		return err
	}
	select {
	case <-msg.Acked():
	case <-msg.Nacked():
		return fmt.Errorf("turn %s: handler failed and the poison queue could not record it", turnID)
	case <-ctx.Done():
		// Let the handler return before the sender's lease is released.
		select {
		case <-msg.Acked():
		case <-msg.Nacked():
		case <-time.After(afterStop):
		}
		return ctx.Err()
	}
	if reason := msg.Metadata.Get(middleware.ReasonForPoisonedKey); reason != "" {
		return &PoisonedError{TurnID: turnID, Reason: reason}
	}
	if why := msg.Metadata.Get(metaDeferred); why != "" {
		return fmt.Errorf("turn %s deferred: %s", turnID, why)
	}
	return nil
}

// turnQueue is the turn handler's subscriber. It hands each message to
// the router as soon as the router takes it, without waiting for the
// previous one's ack: the router runs every message's handler in its own
// goroutine, so turns of different senders run concurrently (per-sender
// order is the scheduler's, which publishes a sender's next turn only
// after the last one's ack). gochannel would serialize every turn of the
// process behind the running one; a subscription per sender would add
// and remove router handlers on the hot path. The channel is unbuffered:
// deliver returns once the router holds the message, and nothing is lost
// in a buffer at shutdown.
type turnQueue struct {
	mu         sync.RWMutex
	out        chan *message.Message
	subscribed chan struct{} // closed once out is set
	closing    chan struct{}
	once       sync.Once
}

func (q *turnQueue) Subscribe(ctx context.Context, _ string) (<-chan *message.Message, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.out != nil {
		return nil, errors.New("messaging: the turn queue has one subscriber")
	}
	q.out = make(chan *message.Message)
	close(q.subscribed)
	go func() {
		select {
		case <-ctx.Done():
			_ = q.Close()
		case <-q.closing:
		}
	}()
	return q.out, nil
}

var errTurnsClosed = errors.New("messaging: the turn handler is not running")

// deliver hands msg to the router, waiting for the router to subscribe
// if it has not yet.
func (q *turnQueue) deliver(ctx context.Context, msg *message.Message) error {
	select {
	case <-q.subscribed:
	case <-q.closing:
		return errTurnsClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Close takes the write lock before closing out: holding the read
	// lock, the send below never meets a closed channel.
	q.mu.RLock()
	defer q.mu.RUnlock()
	select {
	case <-q.closing:
		return errTurnsClosed
	default:
	}
	select {
	case q.out <- msg:
		return nil
	case <-q.closing:
		return errTurnsClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops delivery and ends the router's subscription.
func (q *turnQueue) Close() error {
	q.once.Do(func() {
		close(q.closing)
		q.mu.Lock()
		if q.out != nil {
			close(q.out)
		}
		q.mu.Unlock()
	})
	return nil
}
