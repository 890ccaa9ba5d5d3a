package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/handlers"
)

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the gateway until interrupted",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context())
		},
	}
}

func serve(ctx context.Context) error {
	a, err := openApp(ctx, app.OpenOptions{})
	if err != nil {
		return err
	}
	defer a.Close()
	cfg, log := a.Config, a.Logger
	log.Info("omega starting", "store", a.Where(), "data_dir", cfg.DataDir, "workspace", cfg.WorkspaceDir(), "provider", cfg.Provider.Provider)

	auth := handlers.Auth{Allowed: map[string][]string{}}
	var chans []channels.Channel
	var apiSrv *api.Server
	if cfg.HTTPAddr != "" {
		apiSrv = &api.Server{Addr: cfg.HTTPAddr, Token: cfg.APIToken, Logger: log, DefaultSenders: map[string]string{}}
		if _, err := apiSrv.Listen(); err != nil {
			return err
		}
		chans = append(chans, apiSrv)
	}
	var tg *telegram.Channel
	var wa *whatsapp.Channel
	if cfg.Telegram.Token != "" {
		if tg, err = telegram.New(cfg.Telegram, log); err != nil {
			return err
		}
		auth.Allowed[telegram.Name] = cfg.Telegram.AllowedUserIDs()
		chans = append(chans, tg)
	}
	if cfg.WhatsApp.Enabled {
		container, err := whatsapp.OpenDeviceStore(ctx, a.Store.DB(), string(a.Dialect), log)
		if err != nil {
			return err
		}
		if wa, err = whatsapp.New(ctx, cfg.WhatsApp, container, log); err != nil {
			return err
		}
		wa.OnLoggedOut = func(reason string) {
			notifyOwner(ctx, tg, cfg.Telegram.AllowedUserIDs(), "WhatsApp logged out ("+reason+"). Run `omega whatsapp pair` or send /whatsapp to pair again.", log)
		}
		if !wa.Paired() {
			log.Warn("WhatsApp is enabled but no device is paired: run `omega whatsapp pair` (or send /whatsapp on Telegram)")
		}
		auth.Allowed[whatsapp.Name] = cfg.WhatsApp.AllowedNumbers
		chans = append(chans, wa)
	}
	for _, name := range []string{telegram.Name, whatsapp.Name} {
		if ids, ok := auth.Allowed[name]; ok && len(ids) == 0 {
			log.Warn("no allowlist for this channel: every sender is denied (deny by default)", "channel", name,
				"fix", fmt.Sprintf("set OMEGA_%s", map[string]string{telegram.Name: "TELEGRAM_ALLOWED_USERS", whatsapp.Name: "WHATSAPP_ALLOWED_NUMBERS"}[name]))
		}
	}
	if len(chans) == 0 {
		log.Warn("no channel is enabled: set OMEGA_HTTP_ADDR, OMEGA_TELEGRAM_TOKEN or OMEGA_WHATSAPP_ENABLED")
	}

	opts := app.RuntimeOptions{Channels: chans, Auth: &auth}
	if tg != nil {
		opts.BotName = tg.BotUsername
	}
	var qr *handlers.WhatsAppQR
	if wa != nil {
		// /whatsapp and WHATSAPP_QR send the pairing QR codes as images
		// through the channel the owner asked on (Telegram).
		qr = &handlers.WhatsAppQR{Source: wa, Logger: log}
		opts.WhatsApp = qr
	}
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		return err
	}
	if qr != nil {
		qr.Channels, qr.Store, qr.Senders = rt, a.Store, &handlers.Senders{Store: a.Store, Registry: a.Registry}
	}
	if apiSrv != nil {
		apiSrv.Receiver, apiSrv.Store, apiSrv.Registry, apiSrv.Channels = rt.Gateway, a.Store, a.Registry, rt
		for name, ids := range auth.Allowed {
			if len(ids) > 0 {
				apiSrv.DefaultSenders[name] = ids[0]
			}
		}
	}
	log.Info("omega ready", "channels", len(chans))
	if err := rt.Run(ctx); err != nil {
		return err
	}
	log.Info("omega stopped")
	return nil
}

// notifyOwner tells the owner about a problem through Telegram when it is
// running; the log line is written either way.
func notifyOwner(ctx context.Context, tg *telegram.Channel, owners []string, text string, log interface {
	Error(string, ...any)
}) {
	log.Error(text)
	if tg == nil || len(owners) == 0 {
		return
	}
	if _, err := tg.SendText(ctx, owners[0], text); err != nil {
		log.Error("could not notify the owner on Telegram", "err", err)
	}
}
