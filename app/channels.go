package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/domain/commands"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// ChannelSet is what the configuration turns on: the channels, who may
// talk on each, and the concrete channels the process wires further (the
// HTTP API once the runtime exists, Telegram for the bot's name and owner
// notices, WhatsApp for pairing).
type ChannelSet struct {
	Channels []channels.Channel
	Auth     pipeline.Auth
	API      *api.Server
	Telegram *telegram.Channel
	WhatsApp *whatsapp.Channel
}

// channelEntry builds one channel when the configuration turns it on. The
// registry is the one place that knows the concrete channels: adding a
// channel is its package and one entry here.
type channelEntry struct {
	name string
	// build adds the channel to set when it is configured.
	build func(ctx context.Context, a *App, set *ChannelSet) error
	// allowlist names the variable that lists who may talk on the channel
	// ("" for owner channels, which need none).
	allowlist string
}

var channelRegistry = []channelEntry{
	{name: "http", build: buildHTTP},
	{name: telegram.Name, build: buildTelegram, allowlist: "OMEGA_TELEGRAM_ALLOWED_USERS"},
	{name: whatsapp.Name, build: buildWhatsApp, allowlist: "OMEGA_WHATSAPP_ALLOWED_NUMBERS"},
}

// Channels builds every configured channel and its allowlist, and warns
// about an allowlist left empty (everyone is then denied).
func (a *App) Channels(ctx context.Context) (*ChannelSet, error) {
	set := &ChannelSet{Auth: pipeline.Auth{Allowed: map[string][]string{}}}
	for _, e := range channelRegistry {
		if err := e.build(ctx, a, set); err != nil {
			return nil, fmt.Errorf("channel %s: %w", e.name, err)
		}
		if ids, ok := set.Auth.Allowed[e.name]; ok && len(ids) == 0 && e.allowlist != "" {
			what := "every sender is denied (deny by default)"
			if a.Config.PairingEnabled {
				what = "every sender gets a pairing code, and no owner on it can approve one (use omega pairing approve)"
			}
			a.Logger.Warn("no allowlist for this channel: "+what, "channel", e.name, "fix", "set "+e.allowlist)
		}
	}
	if len(set.Channels) == 0 {
		a.Logger.Warn("no channel is enabled: set OMEGA_HTTP_ADDR, OMEGA_TELEGRAM_TOKEN or OMEGA_WHATSAPP_ENABLED")
	}
	return set, nil
}

func buildHTTP(_ context.Context, a *App, set *ChannelSet) error {
	if a.Config.HTTPAddr == "" {
		return nil
	}
	set.API = &api.Server{Addr: a.Config.HTTPAddr, Token: a.Config.APIToken, Logger: a.Logger, DefaultSenders: map[string]string{}}
	if _, err := set.API.Listen(); err != nil {
		return err
	}
	set.Channels = append(set.Channels, set.API)
	return nil
}

func buildTelegram(_ context.Context, a *App, set *ChannelSet) error {
	cfg := a.Config.Telegram
	if cfg.Token == "" {
		return nil
	}
	tg, err := telegram.New(cfg, a.Logger, telegram.WithCommands(telegramMenus(a.Config.WhatsApp.Enabled)))
	if err != nil {
		return err
	}
	set.Telegram = tg
	set.Auth.Allowed[telegram.Name] = cfg.AllowedUserIDs()
	set.Channels = append(set.Channels, tg)
	return nil
}

// telegramMenus are the command menus, one per language omega speaks
// (English also as the default), without /whatsapp while WhatsApp is off,
// as /help lists them.
func telegramMenus(whatsApp bool) []telegram.Menu {
	var hide []string
	if !whatsApp {
		hide = append(hide, commands.WhatsApp)
	}
	menu := func(code, lang string) telegram.Menu {
		m := telegram.Menu{LanguageCode: code}
		for _, e := range i18n.Menu(lang, hide...) {
			m.Commands = append(m.Commands, telegram.Command{Name: e.Command, Description: e.Description})
		}
		return m
	}
	menus := []telegram.Menu{menu("", i18n.Default)}
	for _, lang := range i18n.Languages() {
		menus = append(menus, menu(i18n.Code(lang), lang))
	}
	return menus
}

func buildWhatsApp(ctx context.Context, a *App, set *ChannelSet) error {
	if !a.Config.WhatsApp.Enabled {
		return nil
	}
	container, err := a.WhatsAppDevices(ctx, a.Logger)
	if err != nil {
		return err
	}
	wa, err := whatsapp.New(ctx, a.Config.WhatsApp, container, a.Logger)
	if err != nil {
		return err
	}
	wa.OnLoggedOut = func(reason string) {
		set.notifyOwner(ctx, a.Config.Telegram.AllowedUserIDs(),
			"WhatsApp logged out ("+reason+"). Run `omega whatsapp pair` or send /whatsapp to pair again.", a.Logger)
	}
	if !wa.Paired() {
		a.Logger.Warn("WhatsApp is enabled but no device is paired: run `omega whatsapp pair` (or send /whatsapp on Telegram)")
	}
	set.WhatsApp = wa
	set.Auth.Allowed[whatsapp.Name] = a.Config.WhatsApp.AllowedNumbers
	set.Channels = append(set.Channels, wa)
	return nil
}

// RuntimeOptions are the options a server process runs these channels
// with.
func (set *ChannelSet) RuntimeOptions() RuntimeOptions {
	opts := RuntimeOptions{Channels: set.Channels, Auth: &set.Auth, SummarizeOnShutdown: true}
	if set.Telegram != nil {
		opts.BotName = set.Telegram.BotUsername
	}
	if set.WhatsApp != nil {
		// /whatsapp and WHATSAPP_QR send the pairing QR codes as images
		// through the channel the owner asked on (Telegram).
		opts.Pairing = set.WhatsApp
	}
	return opts
}

// Attach wires what needs the runtime: the HTTP API receives through the
// runtime's gateway and answers with its first allowlisted sender by
// default.
func (set *ChannelSet) Attach(rt *Runtime) {
	if set.API == nil {
		return
	}
	set.API.Receiver, set.API.Store, set.API.Registry, set.API.Channels = rt.Gateway, rt.Store, rt.Registry, rt
	for name, ids := range set.Auth.Allowed {
		if len(ids) > 0 {
			set.API.DefaultSenders[name] = ids[0]
		}
	}
}

// notifyOwner tells the owner about a problem through Telegram when it is
// running; the log line is written either way.
func (set *ChannelSet) notifyOwner(ctx context.Context, owners []string, text string, log *slog.Logger) {
	log.Error(text)
	if set.Telegram == nil || len(owners) == 0 {
		return
	}
	if _, err := set.Telegram.SendText(ctx, owners[0], text); err != nil {
		log.Error("could not notify the owner on Telegram", "err", err)
	}
}
