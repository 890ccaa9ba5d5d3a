// Package cli holds what the omega commands share: opening the
// application from the environment, sending a command on the bus,
// reading a sender argument and carrying an exit status out of a
// command. The commands themselves live in the packages beside it.
package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/commander"
	"github.com/omega-gateway/omega/app/config"
)

// ExitError carries a specific exit status out of a command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Open loads the configuration and opens storage.
func Open(ctx context.Context, opts app.OpenOptions) (*app.App, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	a, err := app.Open(ctx, cfg, cfg.Logger(), opts)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// OpenCaughtUp opens the app with its read models caught up with the log.
// Where omega has never run it refuses, creating nothing.
func OpenCaughtUp(cmd *cobra.Command) (*app.App, error) {
	a, err := Open(cmd.Context(), app.OpenOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	if err := a.Engine.Setup(cmd.Context()); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.Engine.CatchUp(cmd.Context()); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Send sends a state change as a command on the bus and returns once an
// omega process (this one or a running serve) has handled it.
func Send(cmd *cobra.Command, c any) error {
	a, err := Open(cmd.Context(), app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	return Do(cmd.Context(), a, c)
}

// Do sends a command through an app already open.
func Do(ctx context.Context, a *app.App, c any) (err error) {
	cmdr, err := commander.Open(ctx, a)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cmdr.Close()) }()
	return cmdr.Do(ctx, c)
}
