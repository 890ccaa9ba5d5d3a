package messaging

import (
	"context"
	"fmt"
	"maps"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

// PoisonPublisher is the poison queue: it records each message a handler
// gave up on as a MessagePoisoned event in the log, so failures are
// visible in `omega events` and the timeline and can be replayed by hand.
type PoisonPublisher struct {
	store eventstore.Store
}

// NewPoisonPublisher returns a poison queue backed by store.
func NewPoisonPublisher(store eventstore.Store) *PoisonPublisher {
	return &PoisonPublisher{store: store}
}

// Publish records the messages.
func (p *PoisonPublisher) Publish(topic string, msgs ...*message.Message) error {
	for _, m := range msgs {
		handler := m.Metadata.Get(middleware.PoisonedHandlerKey)
		if handler == "" {
			handler = topic
		}
		ev := system.MessagePoisoned{
			Handler:   handler,
			Topic:     m.Metadata.Get(middleware.PoisonedTopicKey),
			Reason:    m.Metadata.Get(middleware.ReasonForPoisonedKey),
			MessageID: m.UUID,
			Name:      m.Metadata.Get(MetaName),
			Payload:   string(m.Payload),
			Metadata:  maps.Clone(map[string]string(m.Metadata)),
		}
		md := domain.Metadata{CorrelationID: m.Metadata.Get("correlation_id"), CausationID: m.UUID}
		ne, err := domain.NewEventFrom(ev, md)
		if err != nil {
			return err
		}
		ctx := m.Context()
		if ctx == nil || ctx.Err() != nil {
			ctx = context.Background()
		}
		if _, err := p.store.Append(ctx, system.PoisonStream(handler), eventstore.Any, ne); err != nil {
			return fmt.Errorf("record poisoned message %s of %s: %w", m.UUID, handler, err)
		}
		// A command's sender waits for its outcome in the command's stream.
		if id := m.Metadata.Get(MetaCommandID); id != "" {
			failed := system.CommandFailed{CommandID: id, Name: ev.Name, Error: ev.Reason}
			if err := recordOutcome(ctx, p.store, id, failed); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close implements message.Publisher.
func (p *PoisonPublisher) Close() error { return nil }
