package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/cmd/export"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/spf13/cobra"
)

func exportCmd() *cobra.Command {
	var snd, conversation, format string
	cmd := &cobra.Command{
		Use:   "export --sender CHANNEL:ID [--conversation ID] [--format md|jsonl]",
		Short: "Write a sender's conversations from the log: a Markdown transcript or JSON lines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			channel, id, ok := strings.Cut(snd, ":")
			if !ok || channel == "" || id == "" {
				return errors.New("--sender must be CHANNEL:ID, e.g. telegram:12345")
			}
			if format != "md" && format != "jsonl" {
				return fmt.Errorf("--format %q: want md or jsonl", format)
			}
			a, log, err := openAudit(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			// Every turn: a command turn records no conversation of its
			// own, and the transcript places it in the one it fell in.
			ids, err := log.TurnsOf(cmd.Context(), sender.SenderKey(channel, id), "")
			if err != nil {
				return err
			}
			turns, err := export.Messages(cmd.Context(), a.Store, a.Registry, ids)
			if err != nil {
				return err
			}
			ownerChannel, ownerChat, _ := a.Config.HeartbeatDestination()
			notices, err := export.Notices(cmd.Context(), a.Store, a.Registry, export.Recipient{
				Channel: channel, ID: id, Owner: ownerChannel == channel && ownerChat == id,
			})
			if err != nil {
				return err
			}
			msgs := export.Transcript(turns, notices, conversation)
			if format == "jsonl" {
				return export.JSONL(cmd.OutOrStdout(), msgs)
			}
			return export.Markdown(cmd.OutOrStdout(), snd, msgs)
		},
	}
	cmd.Flags().StringVar(&snd, "sender", "", "whose conversations, CHANNEL:ID (required)")
	cmd.Flags().StringVar(&conversation, "conversation", "", "only this conversation")
	cmd.Flags().StringVar(&format, "format", "md", "md or jsonl")
	return cmd
}
