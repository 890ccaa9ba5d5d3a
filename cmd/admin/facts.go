package admin

import (
	"fmt"
	"text/tabwriter"

	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/spf13/cobra"
)

func factsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "facts", Short: "Read and edit what omega remembers about people"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list [CHANNEL:ID]",
		Short: "List remembered facts (from the facts read model)",
		Args:  cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := cli.OpenCaughtUp(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			var who *sender.SenderRef
			if len(args) > 0 {
				ref, _, err := cli.SenderArgs(cmd, args, 0)
				if err != nil {
					return err
				}
				who = &ref
			}
			facts, err := a.Queries.Facts(cmd.Context(), who)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SENDER\tKEY\tVALUE")
			for _, f := range facts {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", sender.SenderLabel(f.Sender), f.Key, f.Value)
			}
			return tw.Flush()
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "set CHANNEL:ID KEY VALUE",
		Short: "Remember a fact (records FactRecorded)",
		Args:  cli.SenderThen(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			who, args, err := cli.SenderArgs(cmd, args, 2)
			if err != nil {
				return err
			}
			return cli.Send(cmd, &senders.RecordFact{Channel: who.Channel, SenderID: who.ID, Key: args[0], Value: args[1], Source: "cli", Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "rm CHANNEL:ID KEY",
		Short: "Forget one fact (records FactRemoved)",
		Args:  cli.SenderThen(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			who, args, err := cli.SenderArgs(cmd, args, 1)
			if err != nil {
				return err
			}
			return cli.Send(cmd, &senders.RemoveFact{Channel: who.Channel, SenderID: who.ID, Key: args[0], Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "purge CHANNEL:ID",
		Short: "Forget every fact about a sender (records FactsPurged)",
		Args:  cli.SenderThen(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			who, _, err := cli.SenderArgs(cmd, args, 0)
			if err != nil {
				return err
			}
			return cli.Send(cmd, &senders.PurgeFacts{Channel: who.Channel, SenderID: who.ID, Meta: domain.Metadata{CorrelationID: "cli"}})
		},
	})
	return cmd
}
