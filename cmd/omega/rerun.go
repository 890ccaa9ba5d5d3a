package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/audit"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/rerun"
)

// exitDiffers is the status of a re-run whose events differ.
const exitDiffers = 3

func rerunCmd() *cobra.Command {
	var o rerun.Options
	var since string
	cmd := &cobra.Command{
		Use:   "rerun [TURN_ID]",
		Short: "Re-run a recorded turn in a scratch store and compare its events (exit 3 when they differ)",
		Long: "Copies the turn's message and its sender's state as of its start into a temporary SQLite store,\n" +
			"runs the driver there with the provider's recorded replies (--live: the configured provider),\n" +
			"and compares the events with the recorded ones, ids and times aside. Nothing is written to the\n" +
			"live store and nothing is sent. --since 24h re-runs every turn completed since then.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (since != "") {
				return errors.New("give a TURN_ID or --since, not both")
			}
			a, log, err := openAudit(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			o.Logger = a.Logger
			ids := args
			if since != "" {
				if ids, err = turnsSince(cmd, log, since); err != nil {
					return err
				}
			}
			return rerunAll(cmd, a, ids, o, since != "")
		},
	}
	cmd.Flags().BoolVar(&o.Live, "live", false, "call the configured provider instead of replaying the recorded replies")
	cmd.Flags().StringVar(&o.PromptsDir, "prompts", "", "prompt files to use instead of $OMEGA_DATA_DIR/prompts")
	cmd.Flags().StringVar(&o.Model, "model", "", "model to use instead of the configured ones")
	cmd.Flags().StringVar(&since, "since", "", "re-run every turn completed since then (RFC 3339 or a duration like 24h)")
	return cmd
}

func rerunAll(cmd *cobra.Command, a *app.App, ids []string, o rerun.Options, batch bool) error {
	out := cmd.OutOrStdout()
	identical := 0
	for _, id := range ids {
		start := time.Now()
		res, err := rerun.Run(cmd.Context(), a.Store, a.Registry, a.Config, id, o)
		if err != nil {
			if !batch {
				return err
			}
			fmt.Fprintf(out, "%s: could not re-run: %v\n", id, err)
			continue
		}
		printResult(out, res, batch, time.Since(start))
		if res.Identical {
			identical++
		}
	}
	if batch {
		fmt.Fprintf(out, "%d of %d turns identical\n", identical, len(ids))
	}
	if identical != len(ids) {
		return &exitError{code: exitDiffers, err: fmt.Errorf("%d of %d re-runs differ", len(ids)-identical, len(ids))}
	}
	return nil
}

func printResult(w io.Writer, res rerun.Result, batch bool, took time.Duration) {
	switch {
	case res.Identical && batch:
		fmt.Fprintf(w, "%s: identical (%s)\n", res.TurnID, took.Round(time.Millisecond))
	case res.Identical:
		fmt.Fprintln(w, "identical")
	default:
		if batch {
			fmt.Fprintf(w, "%s: differs\n", res.TurnID)
		}
		for _, l := range res.Diff {
			fmt.Fprintln(w, l)
		}
	}
}

// turnsSince lists the turns completed since, oldest first.
func turnsSince(cmd *cobra.Command, log *projections.AuditLog, since string) ([]string, error) {
	f, err := audit.ParseFilter(func(name string) string {
		if name == "since" {
			return since
		}
		return ""
	}, time.Now())
	if err != nil {
		return nil, err
	}
	f.Limit = projections.MaxAuditLimit
	var ids []string
	for {
		page, err := log.Query(cmd.Context(), f)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Rows {
			ids = append(ids, r.TurnID)
		}
		if page.Next == "" {
			break
		}
		f.After = page.Next
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, nil
}
