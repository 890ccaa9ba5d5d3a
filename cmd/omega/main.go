// Command omega is the personal AI agent gateway: one binary for the
// server and every tool that inspects or rebuilds its event log.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/config"
)

// exitError carries a specific exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := rootCmd().ExecuteContext(ctx)
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(os.Stderr, "omega:", err)
	os.Exit(code)
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "omega",
		Short:         "omega: a personal AI agent gateway with an event-sourced core",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd(), chatCmd(), migrateCmd(), replayCmd(), eventsCmd(), timelineCmd(), doctorCmd(), factsCmd(), whatsappCmd())
	return root
}

// openApp loads the configuration and opens storage.
func openApp(ctx context.Context, opts app.OpenOptions) (*app.App, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger()
	a, err := app.Open(ctx, cfg, logger, opts)
	if err != nil {
		return nil, err
	}
	return a, nil
}
