// Package messaging wires omega's CQRS buses with watermill: event
// processors are fed from the event store itself (so there is no second
// source of truth to keep in step with the log), commands travel over
// watermill-sql on PostgreSQL and an in-process channel on SQLite, and
// every handler runs behind recoverer, retry and a poison queue that
// records what it gives up on as an event.
package messaging

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// Event message metadata keys.
const (
	MetaName     = "name" // read by watermill's cqrs JSON marshaler
	MetaStream   = "stream"
	MetaVersion  = "version"
	MetaPosition = "position"
)

// Log is the part of the event store the subscriber needs.
type Log interface {
	eventstore.Store
	eventstore.Checkpoints
}

// StoreSubscriber is a watermill Subscriber whose topics are consumer
// names: subscribing to topic T delivers every event of the log after T's
// checkpoint, one at a time, and moves the checkpoint when the handler
// acks. A nacked event is redelivered after a pause; nothing is skipped.
type StoreSubscriber struct {
	log      Log
	registry *domain.Registry
	logger   *slog.Logger
	// NackDelay is the pause before a nacked event is delivered again.
	NackDelay time.Duration

	mu     sync.Mutex
	closed bool
	cancel []context.CancelFunc
	wg     sync.WaitGroup
}

// NewStoreSubscriber returns a subscriber over log.
func NewStoreSubscriber(log Log, reg *domain.Registry, logger *slog.Logger) *StoreSubscriber {
	return &StoreSubscriber{log: log, registry: reg, logger: logger, NackDelay: time.Second}
}

var errClosed = errors.New("subscriber closed")

// Subscribe starts delivering the log to the named consumer.
func (s *StoreSubscriber) Subscribe(ctx context.Context, consumer string) (<-chan *message.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = append(s.cancel, cancel)
	out := make(chan *message.Message)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		s.run(ctx, consumer, out)
	}()
	return out, nil
}

func (s *StoreSubscriber) run(ctx context.Context, consumer string, out chan<- *message.Message) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		pos, err := s.log.Checkpoint(ctx, consumer)
		if err == nil {
			err = eventstore.Follow(ctx, s.log, pos, eventstore.FollowOptions{BatchSize: 100, Name: "consumer " + consumer, Logger: s.logger},
				func(ctx context.Context, evs []domain.Event) (int64, error) {
					for _, e := range evs {
						if err := s.deliver(ctx, consumer, e, out); err != nil {
							return 0, err
						}
						backoff = 100 * time.Millisecond
					}
					return evs[len(evs)-1].Position, nil
				})
		}
		if ctx.Err() != nil {
			return
		}
		s.logger.Error("event subscription failed; retrying", "consumer", consumer, "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// deliver hands one event to the handler until it is acked, then records
// the consumer's checkpoint.
func (s *StoreSubscriber) deliver(ctx context.Context, consumer string, e domain.Event, out chan<- *message.Message) error {
	payload, err := s.payload(e)
	if err != nil {
		return err
	}
	for {
		msg := message.NewMessage(e.ID.String(), payload)
		msg.Metadata.Set(MetaName, e.Type)
		msg.Metadata.Set(MetaStream, e.StreamID)
		msg.Metadata.Set(MetaVersion, strconv.FormatInt(e.Version, 10))
		msg.Metadata.Set(MetaPosition, strconv.FormatInt(e.Position, 10))
		msg.Metadata.Set("correlation_id", e.Correlation())
		msg.SetContext(ctx)
		select {
		case out <- msg:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-msg.Acked():
			if err := s.log.SaveCheckpoint(ctx, consumer, e.Position); err != nil {
				return fmt.Errorf("consumer %s: save checkpoint %d: %w", consumer, e.Position, err)
			}
			return nil
		case <-msg.Nacked():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.logger.Warn("event nacked; redelivering", "consumer", consumer, "position", e.Position, "type", e.Type, "in", s.NackDelay)
			select {
			case <-time.After(s.NackDelay):
			case <-ctx.Done():
				return ctx.Err()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// payload returns the event's data in its current schema version.
func (s *StoreSubscriber) payload(e domain.Event) ([]byte, error) {
	if s.registry == nil || !s.registry.Known(e.Type) || s.registry.SchemaVersion(e.Type) <= max(e.Metadata.SchemaVersion, 1) {
		return e.Data, nil
	}
	data, err := s.registry.Upcast(e)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Close stops every subscription and waits for them to end.
func (s *StoreSubscriber) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, c := range s.cancel {
		c()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
