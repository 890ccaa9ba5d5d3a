package email

import (
	"context"

	"github.com/omega-gateway/omega/channels"
)

// Name is the channel's name in sender ids and targets ("email:<address>").
const Name = "email"

// formatHint tells the model how its replies are shown.
const formatHint = "Replies are sent as email: plain text with Markdown rendered as HTML. Write like a short, direct email; no greeting or signature lines are needed."

// Descriptor describes the email channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Email",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Alerts: true},
	ChatForm:     "address",
	Build:        build,
	Doctor:       doctor,
}

// On implements channels.Settings: an IMAP server turns email on.
func (c *Config) On() bool { return c.IMAPAddr != "" }

// Secrets implements channels.Settings.
func (c *Config) Secrets() []string { return []string{c.Password} }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedAddresses }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_EMAIL_ALLOWED_ADDRESSES" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_EMAIL_IMAP_ADDR" }

func build(_ context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	return New(*s.(*Config), env.Logger)
}

// doctor logs in to both servers, as the channel will.
func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := s.(*Config)
	c, err := New(*cfg, nil)
	if err != nil {
		return []channels.Finding{channels.Fail(err.Error(), "fix the OMEGA_EMAIL_ settings")}
	}
	var out []channels.Finding
	if n, err := c.checkIMAP(ctx); err != nil {
		out = append(out, channels.Fail("IMAP: "+err.Error(), "check OMEGA_EMAIL_IMAP_ADDR, OMEGA_EMAIL_IMAP_TLS, OMEGA_EMAIL_USERNAME, OMEGA_EMAIL_PASSWORD and OMEGA_EMAIL_MAILBOX"))
	} else {
		out = append(out, channels.OK("IMAP login to "+cfg.IMAPAddr+", "+cfg.Mailbox+" has "+itoa(n)+" message(s)"))
	}
	if err := c.checkSMTP(ctx); err != nil {
		out = append(out, channels.Fail("SMTP: "+err.Error(), "check OMEGA_EMAIL_SMTP_ADDR, OMEGA_EMAIL_SMTP_TLS, OMEGA_EMAIL_USERNAME and OMEGA_EMAIL_PASSWORD"))
	} else {
		out = append(out, channels.OK("SMTP login to "+cfg.SMTPAddr))
	}
	if len(cfg.AllowedAddresses) == 0 {
		out = append(out, channels.Warn("no OMEGA_EMAIL_ALLOWED_ADDRESSES: everyone will be denied"))
	}
	return out
}
