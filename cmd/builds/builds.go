// Package builds holds `omega build`: start a build, list them, show one
// with its phases, artifacts and agents' replies, cancel or resume one.
// Each records events; a running `omega serve` does the work.
package builds

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/build"
)

// Command is `omega build`.
func Command() *cobra.Command {
	c := &cobra.Command{
		Use:   "build",
		Short: "Run a topology of agents that builds a piece of software (start, list, show, cancel, resume)",
	}
	c.AddCommand(startCmd(), listCmd(), showCmd(), idCmd("cancel", "Cancel a running build", build.Cancel),
		idCmd("resume", "Resume a failed build at the phase it failed in", build.Resume))
	return c
}

func open(cmd *cobra.Command) (*app.App, error) {
	return cli.Open(cmd.Context(), app.OpenOptions{})
}

// openExisting opens the store for a command that only reads or steers:
// where omega has never run it creates nothing.
func openExisting(cmd *cobra.Command) (*app.App, error) {
	return cli.Open(cmd.Context(), app.OpenOptions{MustExist: true})
}

func startCmd() *cobra.Command {
	var topology, to, lang string
	var wait time.Duration
	c := &cobra.Command{
		Use:   "start REQUEST...",
		Short: "Start a build of what REQUEST describes (a running omega serve does the work)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := open(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			t, err := build.Prepare(cmd.Context(), a.Store, a.Registry, filepath.Join(a.Config.DataDir, "topologies"), topology, a.Logger)
			if err != nil {
				return err
			}
			spec := build.Spec{Request: strings.Join(args, " "), Topology: t, Origin: "cli", Language: i18n.OrDefault(lang)}
			if to != "" {
				who, err := identity.ParseIdentity(to)
				if err != nil {
					return fmt.Errorf("--to: %w", err)
				}
				spec.Channel, spec.ChatID, spec.SenderID = who.Channel, who.ID, who.ID
			}
			req, err := build.Request(cmd.Context(), a.Store, spec)
			if err != nil {
				return err
			}
			cmd.Printf("build %s (%s): topology %s, %d phases, at most %d agent calls\n", req.ID, req.Name, t.Name, len(t.Phases), req.WorstCaseCalls)
			if wait <= 0 {
				return nil
			}
			return waitEnd(cmd, a, req.ID, wait)
		},
	}
	c.Flags().StringVar(&topology, "topology", build.DefaultTopology, "topology folder under $OMEGA_DATA_DIR/topologies")
	c.Flags().StringVar(&to, "to", "", "CHANNEL:CHAT to tell about progress (default: nobody)")
	c.Flags().StringVar(&lang, "lang", i18n.Default, "language of the progress messages")
	c.Flags().DurationVar(&wait, "wait", 0, "wait this long for the build to end, then print it")
	return c
}

// waitEnd polls the build until it ends or wait passes, then shows it.
func waitEnd(cmd *cobra.Command, a *app.App, id string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		st, err := build.Load(cmd.Context(), a.Store, a.Registry, id)
		if err != nil {
			return err
		}
		if st.Terminal() {
			printState(cmd, st)
			if st.Status != builddom.StatusCompleted {
				return &cli.ExitError{Code: 2, Err: fmt.Errorf("build %s %s: %s", id, st.Status, st.Reason)}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return &cli.ExitError{Code: 3, Err: fmt.Errorf("build %s still running after %s (is omega serve running?)", id, wait)}
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func listCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the builds, newest last",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openExisting(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			states, err := build.List(cmd.Context(), a.Store, a.Registry)
			if err != nil {
				return err
			}
			if len(states) == 0 {
				cmd.Println("no builds")
			}
			for _, st := range states {
				cmd.Printf("%s  %-9s  %-12s  %2d/%-2d calls  %s\n", st.Req.ID, st.Status, phaseName(st), st.Calls, st.Req.WorstCaseCalls, st.Req.Name)
			}
			return nil
		},
	}
}

func showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a build: its phases, messages, artifacts' hashes and agents' replies",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openExisting(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			id, err := build.Find(cmd.Context(), a.Store, a.Registry, args[0])
			if err != nil {
				return err
			}
			st, err := build.Load(cmd.Context(), a.Store, a.Registry, id)
			if err != nil {
				return err
			}
			printState(cmd, st)
			return nil
		},
	}
}

// idCmd is a command that records one decision on a build.
func idCmd(use, short string, do func(context.Context, eventstore.Store, *domain.Registry, string, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openExisting(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			id, err := build.Find(cmd.Context(), a.Store, a.Registry, args[0])
			if err != nil {
				return err
			}
			if err := do(cmd.Context(), a.Store, a.Registry, id, "cli"); err != nil {
				return err
			}
			cmd.Printf("build %s: %s recorded\n", id, use)
			return nil
		},
	}
}
