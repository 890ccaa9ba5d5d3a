package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels/whatsapp"
)

func whatsappCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "whatsapp", Short: "Manage the WhatsApp device"}
	var phone string
	pair := &cobra.Command{
		Use:   "pair",
		Short: "Pair omega with WhatsApp: scan the QR code (or use --phone for a pairing code)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openApp(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			container, err := a.WhatsAppDevices(cmd.Context(), a.Logger)
			if err != nil {
				return err
			}
			ch, err := whatsapp.New(cmd.Context(), a.Config.WhatsApp, container, a.Logger)
			if err != nil {
				return err
			}
			if ch.Paired() {
				fmt.Fprintln(cmd.OutOrStdout(), "A WhatsApp device is already paired.")
				return nil
			}
			if err := whatsapp.Pair(cmd.Context(), ch, cmd.OutOrStdout(), phone); err != nil {
				return fmt.Errorf("pair WhatsApp: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Paired. Restart `omega serve` with OMEGA_WHATSAPP_ENABLED=true.")
			return nil
		},
	}
	pair.Flags().StringVar(&phone, "phone", "", "pair by code for this phone number (international format) instead of a QR code")
	cmd.AddCommand(pair)
	return cmd
}

func decodeJSON(r io.Reader, v any) error { return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(v) }
