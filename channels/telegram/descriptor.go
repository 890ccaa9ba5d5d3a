package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/commands"
	"github.com/omega-gateway/omega/domain/i18n"
)

// Descriptor describes the Telegram channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Telegram",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Typing: true, Groups: true, Alerts: true},
	Build:        build,
	Doctor:       doctor,
}

// From returns the Telegram settings among the channels' (zero when
// absent).
func From(cs channels.Configs) Config {
	if c, ok := cs[Name].(*Config); ok {
		return *c
	}
	return Config{}
}

// On implements channels.Settings: a token turns Telegram on.
func (c *Config) On() bool { return c.Token != "" }

// Secrets implements channels.Settings.
func (c *Config) Secrets() []string { return []string{c.Token, c.TranscribeAPIKey} }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedUserIDs() }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_TELEGRAM_ALLOWED_USERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_TELEGRAM_TOKEN" }

func build(_ context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	return New(*s.(*Config), env.Logger, WithCommands(menus(env.QRPairing)))
}

// menus are the command menus, one per language omega speaks (English
// also as the default), without /whatsapp while no channel pairs by QR
// code, as /help lists them.
func menus(qrPairing bool) []Menu {
	var hide []string
	if !qrPairing {
		hide = append(hide, commands.WhatsApp)
	}
	menu := func(code, lang string) Menu {
		m := Menu{LanguageCode: code}
		for _, e := range i18n.Menu(lang, hide...) {
			m.Commands = append(m.Commands, Command{Name: e.Command, Description: e.Description})
		}
		return m
	}
	ms := []Menu{menu("", i18n.Default)}
	for _, lang := range i18n.Languages() {
		ms = append(ms, menu(i18n.Code(lang), lang))
	}
	return ms
}

func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := s.(*Config)
	var out []channels.Finding
	if name, err := getMe(ctx, cfg.APIURL, cfg.Token); err != nil {
		out = append(out, channels.Fail(err.Error(), "check OMEGA_TELEGRAM_TOKEN (from @BotFather) and OMEGA_TELEGRAM_API_URL"))
	} else {
		out = append(out, channels.OK("bot @"+name))
	}
	if len(cfg.AllowedUsers) == 0 {
		out = append(out, channels.Warn("no OMEGA_TELEGRAM_ALLOWED_USERS: everyone will be denied"))
	}
	return out
}

// getMe asks the Bot API who the token belongs to.
func getMe(ctx context.Context, apiURL, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/bot"+token+"/getMe", nil)
	if err != nil {
		return "", fmt.Errorf("bad OMEGA_TELEGRAM_API_URL")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot reach %s", apiURL)
	}
	defer resp.Body.Close()
	var body struct {
		OK     bool `json:"ok"`
		Result struct {
			Username string `json:"username"`
		} `json:"result"`
		Description string `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || !body.OK {
		return "", fmt.Errorf("the Bot API refused the token (HTTP %d %s)", resp.StatusCode, body.Description)
	}
	return body.Result.Username, nil
}
