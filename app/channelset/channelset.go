// Package channelset builds the channels the configuration turns on (the
// registry's, channels/registry: it knows no concrete channel) and the
// HTTP API, and wires them to the runtime once it exists.
package channelset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/handlers/pairing"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// Set is what the configuration turns on: the channels, who may
// talk on each, and the HTTP API, which the process wires further once
// the runtime exists.
type Set struct {
	Channels []channels.Channel
	Auth     pipeline.Auth
	API      *api.Server
	// alerts are the built channels that can reach the owner, in the
	// registry's order, with the owner's chat on each.
	alerts []ownerChat
}

type ownerChat struct {
	ch    channels.Channel
	owner string
}

// New builds the HTTP API and every channel a's configuration turns on,
// and warns about an allowlist left empty (everyone is then denied).
func New(ctx context.Context, a *app.App) (*Set, error) {
	if a == nil {
		return nil, errors.New("channelset: the app is required")
	}
	set := &Set{Auth: pipeline.Auth{Allowed: map[string][]string{}}}
	if err := buildHTTP(a, set); err != nil {
		return nil, fmt.Errorf("channel http: %w", err)
	}
	enabled := a.Config.Enabled()
	env := a.ChannelEnv(a.Logger)
	env.QRPairing = slices.ContainsFunc(enabled, func(e config.Enabled) bool { return e.Capabilities.QRPairing })
	for _, e := range enabled {
		if e.Build == nil {
			continue
		}
		env.NotifyOwner = func(ctx context.Context, text string) { set.notifyOwner(ctx, e.Name, text, a.Logger) }
		ch, err := e.Build(ctx, e.Settings, env)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", e.Name, err)
		}
		ids := e.Settings.Allowed()
		set.Channels = append(set.Channels, ch)
		set.Auth.Allowed[e.Name] = ids
		if e.Capabilities.Alerts && len(ids) > 0 {
			set.alerts = append(set.alerts, ownerChat{ch: ch, owner: ids[0]})
		}
		if len(ids) == 0 && e.Settings.AllowlistVar() != "" {
			warnNoAllowlist(a, e.Name, e.Settings.AllowlistVar())
		}
	}
	if len(set.Channels) == 0 {
		a.Logger.Warn("no channel is enabled: set " + enableVars(a.Config.Descriptors()))
	}
	return set, nil
}

func warnNoAllowlist(a *app.App, name, variable string) {
	what := "every sender is denied (deny by default)"
	if a.Config.PairingEnabled {
		what = "every sender gets a pairing code, and no owner on it can approve one (use omega pairing approve)"
	}
	a.Logger.Warn("no allowlist for this channel: "+what, "channel", name, "fix", "set "+variable)
}

// enableVars lists what turns a channel on: "OMEGA_HTTP_ADDR,
// OMEGA_TELEGRAM_TOKEN or OMEGA_WHATSAPP_ENABLED".
func enableVars(descs []channels.Descriptor) string {
	vars := []string{"OMEGA_HTTP_ADDR"}
	for _, d := range descs {
		if d.Settings != nil {
			v, _, _ := strings.Cut(d.Settings().EnableVar(), "=")
			vars = append(vars, v)
		}
	}
	if len(vars) == 1 {
		return vars[0]
	}
	return strings.Join(vars[:len(vars)-1], ", ") + " or " + vars[len(vars)-1]
}

func buildHTTP(a *app.App, set *Set) error {
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

// RuntimeOptions are the options a server process runs these channels
// with.
func (set *Set) RuntimeOptions() app.RuntimeOptions {
	opts := app.RuntimeOptions{Channels: set.Channels, Auth: &set.Auth, SummarizeOnShutdown: true}
	for _, ch := range set.Channels {
		if b, ok := ch.(interface{ BotUsername() string }); ok && opts.BotName == nil {
			opts.BotName = b.BotUsername
		}
		// /whatsapp and WHATSAPP_QR send the pairing QR codes as images
		// through the channel the owner asked on.
		if p, ok := ch.(pairing.Source); ok && opts.Pairing == nil {
			opts.Pairing = p
		}
	}
	return opts
}

// Attach wires what needs the runtime: the HTTP API receives through the
// runtime's gateway and answers with its first allowlisted sender by
// default.
func (set *Set) Attach(rt *app.Runtime) {
	if set.API == nil {
		return
	}
	set.API.Receiver, set.API.Store, set.API.Registry, set.API.Channels = rt.Gateway, rt.Store, rt.Registry, rt
	set.API.Live = rt.Live
	for name, ids := range set.Auth.Allowed {
		if len(ids) > 0 {
			set.API.DefaultSenders[name] = ids[0]
		}
	}
}

// notifyOwner tells the owner about a problem on the channel named from
// through the first other channel that reaches them; the log line is
// written either way.
func (set *Set) notifyOwner(ctx context.Context, from, text string, log *slog.Logger) {
	log.Error(text)
	for _, o := range set.alerts {
		if o.ch.Name() == from {
			continue
		}
		if _, err := o.ch.SendText(ctx, o.owner, text); err != nil {
			log.Error("could not notify the owner", "channel", o.ch.Name(), "err", err)
		}
		return
	}
}
