package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp/wadevice"
)

// Descriptor describes the WhatsApp channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "WhatsApp",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Typing: true, Groups: true, Alerts: true, QRPairing: true},
	ChatForm:     "number",
	Build:        build,
	Doctor:       doctor,
	Pair:         pairCLI,
}

// From returns the WhatsApp settings among the channels' (zero when
// absent).
func From(cs channels.Configs) Config {
	if c, ok := cs[Name].(*Config); ok {
		return *c
	}
	return Config{}
}

// On implements channels.Settings.
func (c *Config) On() bool { return c.Enabled }

// Validate implements channels.Settings: the numbers are checked as they
// are parsed.
func (c *Config) Validate() error { return nil }

// Secrets implements channels.Settings: the device keys live in the
// database, not in the configuration.
func (c *Config) Secrets() []string { return nil }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedNumbers }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_WHATSAPP_ALLOWED_NUMBERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_WHATSAPP_ENABLED=true" }

// open opens the device store and the channel on it.
func open(ctx context.Context, s channels.Settings, env channels.Env) (*Channel, error) {
	if env.DB == nil {
		return nil, errors.New("no database for the WhatsApp device store")
	}
	container, err := wadevice.OpenDeviceStore(ctx, env.DB, env.Dialect, env.Logger)
	if err != nil {
		return nil, err
	}
	return New(ctx, *s.(*Config), container, env.Logger)
}

func build(ctx context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	wa, err := open(ctx, s, env)
	if err != nil {
		return nil, err
	}
	if env.NotifyOwner != nil {
		wa.OnLoggedOut = func(reason string) {
			env.NotifyOwner(ctx, "WhatsApp logged out ("+reason+"). Run `omega whatsapp pair` or send /whatsapp to pair again.")
		}
	}
	if !wa.Paired() {
		env.Logger.Warn("WhatsApp is enabled but no device is paired: run `omega whatsapp pair` (or send /whatsapp on Telegram)")
	}
	return wa, nil
}

func doctor(ctx context.Context, s channels.Settings, env channels.Env) []channels.Finding {
	var out []channels.Finding
	if env.DB != nil {
		if wa, err := open(ctx, s, env); err != nil {
			out = append(out, channels.Fail(err.Error(), "check the database"))
		} else if !wa.Paired() {
			out = append(out, channels.Fail("no device paired", "run `omega whatsapp pair`"))
		} else {
			out = append(out, channels.OK("device paired"))
		}
	}
	if len(s.Allowed()) == 0 {
		out = append(out, channels.Warn("no OMEGA_WHATSAPP_ALLOWED_NUMBERS: everyone will be denied"))
	}
	return out
}

// pairCLI is `omega whatsapp pair`.
func pairCLI(ctx context.Context, s channels.Settings, env channels.Env, out io.Writer, phone string) error {
	ch, err := open(ctx, s, env)
	if err != nil {
		return err
	}
	if ch.Paired() {
		fmt.Fprintln(out, "A WhatsApp device is already paired.")
		return nil
	}
	if err := Pair(ctx, ch, out, phone); err != nil {
		return fmt.Errorf("pair WhatsApp: %w", err)
	}
	fmt.Fprintln(out, "Paired. Restart `omega serve` with OMEGA_WHATSAPP_ENABLED=true.")
	return nil
}
