package app

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	app   *App
	buses *messaging.Buses
	stop  context.CancelFunc
	done  chan error
}

// OpenCommander starts a router with the sender and task command handlers.
func (a *App) OpenCommander(ctx context.Context) (*Commander, error) {
	announcer, _ := a.backend.(messaging.Announcer)
	buses, err := messaging.New(messaging.Options{Backend: a.Store.Backend(), DB: a.backend.DB(), Log: a.Store,
		Registry: a.Registry, Logger: a.Logger, Announcer: announcer})
	if err != nil {
		return nil, err
	}
	pairings, err := a.commandAccess()
	if err != nil {
		return nil, errors.Join(err, buses.Close())
	}
	hs := append(a.Senders.CommandHandlers(), a.Effects.CommandHandlers()...)
	hs = append(hs, a.budgetCommands()...)
	if err := buses.AddCommandHandlers(ctx, append(hs, pairings.CommandHandlers()...)...); err != nil {
		return nil, errors.Join(err, buses.Close())
	}
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	c := &Commander{app: a, buses: buses, stop: stop, done: make(chan error, 1)}
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
	return messaging.Wait(ctx, c.app.Store, c.app.Registry, id, commandWait)
}

// Close stops the router, letting a handler in flight finish and ack,
// and releases the buses.
func (c *Commander) Close() error {
	defer c.stop()
	err := c.buses.Router.Close()
	return errors.Join(err, <-c.done, c.buses.Close())
}
