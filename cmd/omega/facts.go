package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/senders"
)

func factsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "facts", Short: "Read and edit what omega remembers about people"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list [CHANNEL SENDER]",
		Short: "List remembered facts (from the facts read model)",
		Args:  cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			var who *domain.SenderRef
			if len(args) == 2 {
				who = &domain.SenderRef{Channel: args[0], ID: args[1]}
			} else if len(args) == 1 {
				return fmt.Errorf("give both CHANNEL and SENDER, or neither")
			}
			facts, err := a.Queries.Facts(cmd.Context(), who)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SENDER\tKEY\tVALUE")
			for _, f := range facts {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Sender, f.Key, f.Value)
			}
			return tw.Flush()
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "set CHANNEL SENDER KEY VALUE",
		Short: "Remember a fact (records FactRecorded)",
		Args:  cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sendCommand(cmd, &senders.RecordFact{Channel: args[0], SenderID: args[1], Key: args[2], Value: args[3], Source: "cli", Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "rm CHANNEL SENDER KEY",
		Short: "Forget one fact (records FactRemoved)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sendCommand(cmd, &senders.RemoveFact{Channel: args[0], SenderID: args[1], Key: args[2], Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "purge CHANNEL SENDER",
		Short: "Forget every fact about a sender (records FactsPurged)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return sendCommand(cmd, &senders.PurgeFacts{Channel: args[0], SenderID: args[1], Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	return cmd
}

// sendCommand sends a state change as a command on the bus and returns
// once an omega process (this one or a running serve) has handled it.
func sendCommand(cmd *cobra.Command, c any) error {
	a, err := openApp(cmd.Context(), app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	return doCommand(cmd.Context(), a, c)
}

func doCommand(ctx context.Context, a *app.App, c any) (err error) {
	commander, err := a.OpenCommander(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, commander.Close()) }()
	return commander.Do(ctx, c)
}
