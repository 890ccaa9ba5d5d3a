package messaging

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

// MetaCommandID carries the id a sender chose for a command; its outcome
// is recorded in the stream system.CommandStream(id).
const MetaCommandID = "command_id"

// commandRecheck bounds how long Wait trusts the store's change signals,
// which are best-effort, before it looks at the command's stream anyway.
const commandRecheck = time.Second

// RejectedError marks a command error that retrying cannot fix (the
// decision said no): it is recorded as CommandFailed at once instead of
// going through the retries and the poison queue.
type RejectedError struct{ Err error }

func (e *RejectedError) Error() string { return e.Err.Error() }
func (e *RejectedError) Unwrap() error { return e.Err }

// Reject marks err as a rejection (nil stays nil).
func Reject(err error) error {
	if err == nil {
		return nil
	}
	return &RejectedError{Err: err}
}

// CommandError is a command's recorded failure, as Wait reports it.
type CommandError struct {
	Name, Reason string
}

func (e *CommandError) Error() string { return e.Name + ": " + e.Reason }

// Send publishes cmd on the command bus under a fresh id, to be passed to
// Wait.
func (b *Buses) Send(ctx context.Context, cmd any) (string, error) {
	id := uuid.NewString()
	err := b.CommandBus.SendWithModifiedMessage(ctx, cmd, func(m *message.Message) error {
		m.Metadata.Set(MetaCommandID, id)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("send %s: %w", Marshaler.Name(cmd), err)
	}
	return id, nil
}

// Wait blocks until the outcome of command id is in the log: nil when it
// was handled, a *CommandError when it failed. Any omega process on the
// store may be the one that handled it.
func Wait(ctx context.Context, store eventstore.Store, registry *domain.Registry, id string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	changes := store.Changes(ctx)
	recheck := time.NewTicker(commandRecheck)
	defer recheck.Stop()
	for {
		done, err := commandOutcome(ctx, store, registry, id)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no omega process handled command %s within %s: %w", id, timeout, ctx.Err())
		case <-changes:
		case <-recheck.C:
		}
	}
}

// commandOutcome reads the command's stream; done reports an outcome.
func commandOutcome(ctx context.Context, store eventstore.Store, registry *domain.Registry, id string) (bool, error) {
	evs, err := store.Load(ctx, system.CommandStream(id), 0)
	if err != nil {
		return false, fmt.Errorf("load outcome of command %s: %w", id, err)
	}
	for _, e := range evs {
		p, err := registry.Decode(e)
		if err != nil {
			return false, fmt.Errorf("outcome of command %s: %w", id, err)
		}
		switch o := p.(type) {
		case system.CommandHandled:
			return true, nil
		case system.CommandFailed:
			return true, &CommandError{Name: o.Name, Reason: o.Error}
		}
	}
	return false, nil
}

// recordedHandler records the outcome of each command that carries an id.
type recordedHandler struct {
	cqrs.CommandHandler
	store eventstore.Store
}

func (h recordedHandler) Handle(ctx context.Context, cmd any) error {
	msg := cqrs.OriginalMessageFromCtx(ctx)
	if msg == nil || msg.Metadata.Get(MetaCommandID) == "" {
		return h.CommandHandler.Handle(ctx, cmd)
	}
	id, name := msg.Metadata.Get(MetaCommandID), Marshaler.Name(cmd)
	// Delivery is at least once: a process that stops right after handling
	// may lose the ack (the sender's CLI exits once it sees the outcome),
	// and the command comes again. Its recorded outcome says it ran.
	seen, err := h.store.StreamVersion(ctx, system.CommandStream(id))
	if err != nil {
		return fmt.Errorf("outcome of command %s: %w", id, err)
	}
	if seen > 0 {
		return nil
	}
	err = h.CommandHandler.Handle(ctx, cmd)
	var rejected *RejectedError
	switch {
	case err == nil:
		return recordOutcome(ctx, h.store, id, system.CommandHandled{CommandID: id, Name: name})
	case errors.As(err, &rejected):
		return recordOutcome(ctx, h.store, id, system.CommandFailed{CommandID: id, Name: name, Error: err.Error()})
	}
	return err // retried; the poison queue records the final failure
}

func recordOutcome(ctx context.Context, store eventstore.Store, id string, p domain.Payload) error {
	ne, err := domain.NewEventFrom(p, domain.Metadata{CausationID: id})
	if err != nil {
		return err
	}
	if _, err := store.Append(ctx, system.CommandStream(id), eventstore.Any, ne); err != nil {
		return fmt.Errorf("record outcome of command %s: %w", id, err)
	}
	return nil
}
