package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers"
)

func factsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "facts", Short: "Read and edit what omega remembers about people"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list [CHANNEL SENDER]",
		Short: "List remembered facts (from the facts read model)",
		Args:  cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openApp(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			if err := a.Engine.Setup(cmd.Context()); err != nil {
				return err
			}
			if err := a.Engine.CatchUp(cmd.Context()); err != nil {
				return err
			}
			q, qargs := "SELECT sender, key, value FROM facts ORDER BY sender, key", []any{}
			if len(args) == 2 {
				q, qargs = "SELECT sender, key, value FROM facts WHERE sender = $1 ORDER BY key", []any{args[0] + "-" + args[1]}
			} else if len(args) == 1 {
				return fmt.Errorf("give both CHANNEL and SENDER, or neither")
			}
			rows, err := a.Store.DB().QueryContext(cmd.Context(), q, qargs...)
			if err != nil {
				return fmt.Errorf("read facts: %w", err)
			}
			defer rows.Close()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SENDER\tKEY\tVALUE")
			for rows.Next() {
				var s, k, v string
				if err := rows.Scan(&s, &k, &v); err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s, k, v)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			return tw.Flush()
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "set CHANNEL SENDER KEY VALUE",
		Short: "Remember a fact (records FactRecorded)",
		Args:  cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSenders(cmd, func(s handlers.Senders) error {
				return s.RecordFact(cmd.Context(), &handlers.RecordFact{Channel: args[0], SenderID: args[1], Key: args[2], Value: args[3], Source: "cli", Meta: domain.Metadata{CorrelationID: "cli"}})
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "rm CHANNEL SENDER KEY",
		Short: "Forget one fact (records FactRemoved)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSenders(cmd, func(s handlers.Senders) error {
				return s.RemoveFact(cmd.Context(), &handlers.RemoveFact{Channel: args[0], SenderID: args[1], Key: args[2], Meta: domain.Metadata{CorrelationID: "cli"}})
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "purge CHANNEL SENDER",
		Short: "Forget every fact about a sender (records FactsPurged)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSenders(cmd, func(s handlers.Senders) error {
				return s.PurgeFacts(cmd.Context(), &handlers.PurgeFacts{Channel: args[0], SenderID: args[1], Meta: domain.Metadata{CorrelationID: "cli"}})
			})
		},
	})
	return cmd
}

func withSenders(cmd *cobra.Command, fn func(handlers.Senders) error) error {
	a, err := openApp(cmd.Context(), app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(handlers.Senders{Store: a.Store, Registry: a.Registry})
}
