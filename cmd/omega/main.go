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
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/cmd/admin"
	"github.com/omega-gateway/omega/cmd/builds"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/cmd/doctor"
	"github.com/omega-gateway/omega/cmd/reports"
	"github.com/omega-gateway/omega/projections/auditlog"
)

func main() {
	ctx, stop := onSignals()
	defer stop()
	err := rootCmd().ExecuteContext(ctx)
	if err == nil {
		return
	}
	code := 1
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	// The last line may quote a server's answer; it must not quote a secret.
	cfg, _ := config.Load()
	fmt.Fprintln(os.Stderr, "omega:", cfg.Redactor().String(err.Error()))
	os.Exit(code)
}

// onSignals returns a context that ends at the first SIGINT or SIGTERM, so
// a command stops taking work and finishes what it can. A second signal
// exits at once: every event already appended is committed, so nothing
// recorded is lost, and unfinished work resumes at the next start.
func onSignals() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel()
		if s, ok := <-sigs; ok {
			fmt.Fprintf(os.Stderr, "omega: second %s: exiting at once (unfinished work resumes at the next start)\n", s)
			os.Exit(exitInterrupted)
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// exitInterrupted is the status of an exit forced by a second signal
// (128 + SIGINT, as shells report an interrupted command).
const exitInterrupted = 130

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "omega",
		Short:         "omega: a personal AI agent gateway with an event-sourced core",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd(), chatCmd(), migrateCmd(), replayCmd(), doctor.NewCommand(), rerunCmd(), exportCmd())
	root.AddCommand(reports.Commands()...)
	root.AddCommand(admin.Commands()...)
	root.AddCommand(pairCmds()...)
	root.AddCommand(builds.Command())
	return root
}

// openAudit opens the app with its read models caught up, and the audit
// queries over them.
func openAudit(cmd *cobra.Command) (*app.App, *auditlog.Queries, error) {
	a, err := cli.OpenCaughtUp(cmd)
	if err != nil {
		return nil, nil, err
	}
	return a, a.Audit, nil
}
