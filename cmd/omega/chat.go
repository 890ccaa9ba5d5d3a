package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
)

func chatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "chat",
		Short: "Talk to omega in this terminal (type /exit to leave)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			// Logs would scribble over the conversation: they go to a file.
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
			}
			logPath := filepath.Join(cfg.DataDir, "chat.log")
			logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return fmt.Errorf("open log %s: %w", logPath, err)
			}
			defer logFile.Close()
			logger := slog.New(slog.NewTextHandler(logFile, nil))
			a, err := app.Open(cmd.Context(), cfg, logger, app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			name := "owner"
			if u, err := user.Current(); err == nil && u.Username != "" {
				name = u.Username
			}
			term := registry.Terminal(os.Stdin, cmd.OutOrStdout(), name)
			rt, err := a.NewRuntime(cmd.Context(), app.RuntimeOptions{Channels: []channels.Channel{term}})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "omega chat (%s, provider %s). Type /exit to leave; logs: %s\n", a.Where(), cfg.Provider.Provider, logPath)
			return runUntilChannelEnds(cmd, rt, &term.OnEnd)
		},
	}
}

// runUntilChannelEnds runs the runtime and stops it when the terminal
// channel has read its last line and the turns it started are done.
func runUntilChannelEnds(cmd *cobra.Command, rt *app.Runtime, onEnd *func(waitForReplies bool)) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	*onEnd = func(waitForReplies bool) {
		if waitForReplies {
			if err := rt.WaitIdle(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "omega:", err)
			}
		}
		cancel()
	}
	return rt.Run(ctx)
}
