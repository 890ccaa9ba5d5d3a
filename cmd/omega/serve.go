package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/handlers"
	"github.com/omega-gateway/omega/messaging"
)

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the gateway until interrupted",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context())
		},
	}
}

func serve(ctx context.Context) error {
	a, err := openApp(ctx, app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	log := a.Logger
	log.Info("omega starting", "store", a.Where(), "data_dir", a.Config.DataDir)
	if err := a.Engine.Setup(ctx); err != nil {
		return err
	}
	buses, err := messaging.New(messaging.Options{
		Backend: a.Store.Backend(), DB: a.Store.DB(), Log: a.Store, Registry: a.Registry, Logger: log,
	})
	if err != nil {
		return err
	}
	defer buses.Close()
	senders := handlers.Senders{Store: a.Store, Registry: a.Registry}
	if err := buses.Commands.AddHandlers(senders.CommandHandlers()...); err != nil {
		return fmt.Errorf("register command handlers: %w", err)
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.Engine.Run(gctx) })
	g.Go(func() error { return buses.Router.Run(gctx) })
	g.Go(func() error {
		select {
		case <-buses.Router.Running():
			log.Info("omega ready", "store", a.Where())
		case <-gctx.Done():
		}
		return nil
	})
	err = g.Wait()
	if ctx.Err() != nil {
		log.Info("omega stopped")
		return nil
	}
	return err
}
