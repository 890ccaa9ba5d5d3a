package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
	"github.com/omega-gateway/omega/cmd/cli"
)

// pairCmds are `omega <channel> pair` for every channel that links a
// device from the terminal (`omega whatsapp pair`).
func pairCmds() []*cobra.Command {
	var cmds []*cobra.Command
	for _, d := range registry.All() {
		if d.Pair != nil {
			cmds = append(cmds, pairCmd(d))
		}
	}
	return cmds
}

func pairCmd(d channels.Descriptor) *cobra.Command {
	cmd := &cobra.Command{Use: d.Name, Short: "Manage the " + d.Title + " device"}
	var phone string
	pair := &cobra.Command{
		Use:   "pair",
		Short: "Pair omega with " + d.Title + ": scan the QR code (or use --phone for a pairing code)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := cli.Open(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			s, ok := a.Config.Channels[d.Name]
			if !ok {
				return fmt.Errorf("%s has no settings", d.Title)
			}
			return d.Pair(cmd.Context(), s, a.ChannelEnv(a.Logger), cmd.OutOrStdout(), phone)
		},
	}
	pair.Flags().StringVar(&phone, "phone", "", "pair by code for this phone number (international format) instead of a QR code")
	cmd.AddCommand(pair)
	return cmd
}
