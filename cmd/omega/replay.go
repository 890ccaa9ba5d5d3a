package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
)

func replayCmd() *cobra.Command {
	var names []string
	var verify, skipBad bool
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Drop and rebuild projections from position 0 (or --verify them)",
		Long: `replay drops the selected read models (all by default), recreates them and
applies the whole event log again. With --verify it rebuilds into shadow tables
instead, compares them with the live tables row by row, prints every
difference and exits with status 3 if there is any.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := cli.Open(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			a.Engine.SkipBad = skipBad
			if err := a.Engine.Setup(cmd.Context()); err != nil {
				return err
			}
			ps, err := a.Engine.Select(names...)
			if err != nil {
				return err
			}
			progress := newProgress(os.Stderr)
			out := cmd.OutOrStdout()
			if !verify {
				if err := a.Engine.Rebuild(cmd.Context(), ps, progress); err != nil {
					return fmt.Errorf("replay: %w", err)
				}
				fmt.Fprintf(out, "rebuilt %d projection(s) from %s\n", len(ps), a.Where())
				reportPoisoned(cmd, a)
				return nil
			}
			// Bring the live read models up to the log first (what serve
			// does), so the comparison covers every event; a tampered row
			// stays tampered, since catching up only applies new events.
			if err := a.Engine.CatchUp(cmd.Context()); err != nil {
				return fmt.Errorf("verify: catch up: %w", err)
			}
			diffs, err := a.Engine.Verify(cmd.Context(), ps, progress)
			if err != nil {
				return fmt.Errorf("verify: %w", err)
			}
			for _, d := range diffs {
				fmt.Fprint(out, d.String())
			}
			if len(diffs) > 0 {
				return &cli.ExitError{Code: 3, Err: errors.New("projections differ from a rebuild of the log (see above)")}
			}
			fmt.Fprintf(out, "verified %d projection(s): identical to a rebuild from the log\n", len(ps))
			reportPoisoned(cmd, a)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&names, "projection", nil, "projection to rebuild (repeatable; default all)")
	cmd.Flags().BoolVar(&verify, "verify", false, "rebuild into shadow tables and compare instead of replacing")
	cmd.Flags().BoolVar(&skipBad, "skip-bad", false, "skip (and log) events of unknown type instead of stopping (undecodable ones are always skipped and recorded as poisoned)")
	return cmd
}

// reportPoisoned says how many events the read models skip. A skip is not
// replayed from its record: the rebuild meets the same failure and skips
// the event again, which is why it matches the live model (and why a
// fixed projection, whose new schema version rebuilds it, stops skipping).
func reportPoisoned(cmd *cobra.Command, a *app.App) {
	poisoned, err := a.Engine.Poisoned(cmd.Context())
	if err != nil || len(poisoned) == 0 {
		return
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%d event(s) skipped by read models as poisoned, in the live models and the rebuild alike (see `omega doctor`)\n", len(poisoned))
}
