package main

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/channelset"
	"github.com/omega-gateway/omega/app/config"
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
	if err := config.EnsureAPIToken(&cfg, os.Stdout); err != nil {
		return err
	}
	a, err := app.Open(ctx, cfg, cfg.Logger(), app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	log := a.Logger
	tuneMemory(cfg, log)
	log.Info("omega starting", "store", a.Where(), "data_dir", cfg.DataDir, "workspace", cfg.WorkspaceDir(),
		"provider", cfg.Provider.Provider, "sandbox", cfg.Provider.Sandbox)

	set, err := channelset.New(ctx, a)
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
	m.Channels = rt
	if set.API != nil {
		if err := operatorViews(set.API, a, m, rt); err != nil {
			return err
		}
	}
	log.Info("omega ready", "channels", len(set.Channels))
	go releaseStartup(ctx, rt.Buses.Router.Running())
	if err := rt.Run(ctx); err != nil {
		return err
	}
	log.Info("omega stopped")
	return nil
}

// tuneMemory sets the collector's target and soft memory limit for the
// long-running server from OMEGA_GOGC and OMEGA_MEMORY_LIMIT, unless Go's
// own GOGC or GOMEMLIMIT is set, which the runtime has applied already.
func tuneMemory(cfg config.Config, log *slog.Logger) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		log.Debug("memory: GOGC from the environment", "gogc", v)
	} else {
		debug.SetGCPercent(cfg.GCPercent)
	}
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		log.Debug("memory: GOMEMLIMIT from the environment", "limit", v)
	} else if cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(int64(cfg.MemoryLimit))
	}
}

// releaseStartup collects once the router runs and returns the free memory
// to the system: start-up leaves garbage the live server does not keep
// (the migrations' parse buffers, 4 MiB each, and what package init and
// opening the store allocated for a moment), which the runtime would
// otherwise hand back only slowly and only above its heap goal.
func releaseStartup(ctx context.Context, running <-chan struct{}) {
	select {
	case <-running:
		// Two collections: a sync.Pool (the parse buffers are pooled) keeps
		// what it holds through one, and until the second its 16 MiB count
		// as live heap, which sets the next collection's goal that high.
		runtime.GC()
		debug.FreeOSMemory()
	case <-ctx.Done():
	}
}
