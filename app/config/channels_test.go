package config

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
)

// fakeSettings are a channel's settings declared only in its own
// package: nothing in this package names them.
type fakeSettings struct {
	Token string   `env:"FAKE_TOKEN"`
	Mode  string   `env:"FAKE_MODE" envDefault:"quiet"`
	Rooms []string `env:"FAKE_ROOMS"`
}

func (f *fakeSettings) On() bool { return f.Token != "" }
func (f *fakeSettings) Validate() error {
	if f.Mode != "quiet" && f.Mode != "loud" {
		return errors.New("fake: OMEGA_FAKE_MODE must be quiet or loud")
	}
	return nil
}
func (f *fakeSettings) Secrets() []string    { return []string{f.Token} }
func (f *fakeSettings) Allowed() []string    { return f.Rooms }
func (f *fakeSettings) AllowlistVar() string { return "OMEGA_FAKE_ROOMS" }
func (f *fakeSettings) EnableVar() string    { return "OMEGA_FAKE_TOKEN" }

var fakeChannel = channels.Descriptor{
	Name: "fake", Title: "Fake", ChatForm: "room",
	Settings:     func() channels.Settings { return &fakeSettings{} },
	Capabilities: channels.Capabilities{Alerts: true},
	Doctor: func(context.Context, channels.Settings, channels.Env) []channels.Finding {
		return []channels.Finding{channels.OK("reachable")}
	},
}

// A channel registered only in the descriptor list gets its settings
// parsed with their defaults, validated, redacted and accepted as a
// heartbeat destination.
func TestRegisteredChannelIsConfigured(t *testing.T) {
	descs := append(registry.All(), fakeChannel)
	base := map[string]string{"OMEGA_DATA_DIR": "/tmp/x"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	c, err := LoadChannels(with("OMEGA_FAKE_TOKEN", "fake-secret-77", "OMEGA_FAKE_ROOMS", "lobby,den"), descs)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := c.Channels["fake"].(*fakeSettings)
	if !ok || s.Mode != "quiet" || s.Token != "fake-secret-77" {
		t.Fatalf("fake settings = %+v", c.Channels["fake"])
	}
	if got := c.Redactor().String("token fake-secret-77"); got != "token [REDACTED]" {
		t.Errorf("redacted = %q", got)
	}
	if ch, chat, err := c.HeartbeatDestination(); err != nil || ch != "fake" || chat != "lobby" {
		t.Errorf("owner = %s:%s, %v; want fake:lobby", ch, chat, err)
	}
	if names := enabledNames(c); names != "fake" {
		t.Errorf("enabled = %q", names)
	}

	_, err = LoadChannels(with("OMEGA_FAKE_TOKEN", "t", "OMEGA_FAKE_MODE", "shouty"), descs)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "OMEGA_FAKE_MODE must be quiet or loud") {
		t.Errorf("bad mode: %v", err)
	}
	if _, err := LoadChannels(with("OMEGA_FAKE_MODE", "shouty"), descs); err != nil {
		t.Errorf("a channel turned off is not validated: %v", err)
	}

	c, err = LoadChannels(with("OMEGA_HEARTBEAT_TARGET", "fake:attic"), descs)
	if ch, chat, _ := c.HeartbeatDestination(); err != nil || ch != "fake" || chat != "attic" {
		t.Errorf("target fake:attic = %s:%s, %v", ch, chat, err)
	}
	_, err = LoadChannels(with("OMEGA_HEARTBEAT_TARGET", "pigeon:roof"), descs)
	if err == nil || !strings.Contains(err.Error(), "want telegram:<chat> or whatsapp:<number> or email:<address> or matrix:<room> or slack:<channel> or signal:<number> or discord:<user id> or fake:<room>") {
		t.Errorf("unknown target: %v", err)
	}
}

func enabledNames(c Config) string {
	var names []string
	for _, e := range c.Enabled() {
		names = append(names, e.Name)
	}
	return strings.Join(names, ",")
}

// The registry's channels keep their variables, defaults and messages.
func TestRegistryChannelsKeepTheirSettings(t *testing.T) {
	c, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_TELEGRAM_TOKEN": "123:tg-secret",
		"OMEGA_TELEGRAM_ALLOWED_USERS": "42", "OMEGA_WHATSAPP_ENABLED": "true", "OMEGA_WHATSAPP_ALLOWED_NUMBERS": "+1 555 010 9999",
		"OMEGA_TRANSCRIBE_API_KEY": "tr-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if ch, chat, _ := c.HeartbeatDestination(); ch != "telegram" || chat != "42" {
		t.Errorf("owner = %s:%s", ch, chat)
	}
	if got := c.Redactor().String("123:tg-secret tr-secret"); got != "[REDACTED] [REDACTED]" {
		t.Errorf("redacted = %q", got)
	}
	if names := enabledNames(c); names != "telegram,whatsapp" {
		t.Errorf("enabled = %q", names)
	}
	_, err = LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_TELEGRAM_TOKEN": "t", "OMEGA_TELEGRAM_GROUP_MODE": "some",
		"OMEGA_HEARTBEAT_TARGET": "sms:1"})
	for _, want := range []string{`telegram: TELEGRAM_GROUP_MODE "some": want mention or all`,
		`OMEGA_HEARTBEAT_TARGET: want telegram:<chat> or whatsapp:<number> or email:<address> or matrix:<room> or slack:<channel> or signal:<number> or discord:<user id> (got "sms:1")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
}

// A channel's variable that does not parse is reported with omega's own.
func TestChannelParseErrorsJoinOmegas(t *testing.T) {
	_, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_HISTORY_LIMIT": "many",
		"OMEGA_WHATSAPP_ALLOWED_NUMBERS": "12"})
	for _, want := range []string{`OMEGA_HISTORY_LIMIT must be a whole number (got "many")`, `OMEGA_WHATSAPP_ALLOWED_NUMBERS: invalid phone number "12"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}
