package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/config"
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
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	// Before the logger is built, so that it masks a generated token too.
	if err := app.EnsureAPIToken(&cfg, os.Stdout); err != nil {
		return err
	}
	a, err := app.Open(ctx, cfg, cfg.Logger(), app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	log := a.Logger
	log.Info("omega starting", "store", a.Where(), "data_dir", cfg.DataDir, "workspace", cfg.WorkspaceDir(),
		"provider", cfg.Provider.Provider, "sandbox", cfg.Provider.Sandbox)

	set, err := a.Channels(ctx)
	if err != nil {
		return err
	}
	opts := set.RuntimeOptions()
	m, err := startMetrics(ctx, a)
	if err != nil {
		return err
	}
	opts.Metrics = m.Registry()
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		return err
	}
	set.Attach(rt)
	if set.API != nil {
		if err := operatorViews(set.API, a, m); err != nil {
			return err
		}
	}
	log.Info("omega ready", "channels", len(set.Channels))
	if err := rt.Run(ctx); err != nil {
		return err
	}
	log.Info("omega stopped")
	return nil
}
