// Package commander sends state changes as commands on the bus and waits
// for their outcome in the log: the way the CLI changes what a running
// omega (or none) acts on.
package commander

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
)

// commandWait is how long a sender waits for any omega process to handle
// its command.
const commandWait = 10 * time.Second

// Commander sends state changes as commands on the bus and waits for
// their outcome in the log. It runs its own router with the state-change
// handlers for as long as it is open, so a command is handled even when
// no `omega serve` runs; on PostgreSQL a running serve may win it instead.
type Commander struct {
	log      eventstore.Store
	registry *domain.Registry
	buses    *messaging.Buses
	stop     context.CancelFunc
	done     chan error
}

// Open starts a router with a's state-change command handlers.
func Open(ctx context.Context, a *app.App) (*Commander, error) {
	if a == nil {
		return nil, errors.New("commander: the app is required")
	}
	buses, err := a.CommandBuses()
	if err != nil {
		return nil, err
	}
	hs, err := a.CommandHandlers()
	if err != nil {
		return nil, errors.Join(err, buses.Close())
	}
	if err := buses.AddCommandHandlers(ctx, hs...); err != nil {
		return nil, errors.Join(err, buses.Close())
	}
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	c := &Commander{log: a.Store, registry: a.Registry, buses: buses, stop: stop, done: make(chan error, 1)}
	go func() { c.done <- buses.Router.Run(run) }()
	select {
	case <-buses.Router.Running():
		return c, nil
	case err := <-c.done:
		stop()
		return nil, errors.Join(fmt.Errorf("command router: %w", err), buses.Close())
	}
}

// Do sends cmd and waits until some omega process has handled it; a
// failed command's error is a *messaging.CommandError.
func (c *Commander) Do(ctx context.Context, cmd any) error {
	id, err := c.buses.Send(ctx, cmd)
	if err != nil {
		return err
	}
	return messaging.Wait(ctx, c.log, c.registry, id, commandWait)
}

// Close stops the router, letting a handler in flight finish and ack,
// and releases the buses.
func (c *Commander) Close() error {
	defer c.stop()
	err := c.buses.Router.Close()
	return errors.Join(err, <-c.done, c.buses.Close())
}
