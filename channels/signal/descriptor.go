package signal

import (
	"context"
	"net/http"

	"github.com/omega-gateway/omega/channels"
)

// Name is the channel's name in sender ids and targets ("signal:<number>").
const Name = "signal"

// formatHint tells the model how its replies are shown.
const formatHint = "Replies are shown in Signal: bold, italics, strikethrough and monospace (inline code and code blocks) are kept from your Markdown; links are written out, headings and tables become plain lines. Keep replies short and conversational."

// Descriptor describes the Signal channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Signal",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Typing: true, Groups: true, Alerts: true},
	ChatForm:     "number",
	Build:        build,
	Doctor:       doctor,
}

// On implements channels.Settings: the daemon's URL turns Signal on.
func (c *Config) On() bool { return c.URL != "" }

// Secrets implements channels.Settings: the daemon has no credentials
// of its own (keep it on a loopback address).
func (c *Config) Secrets() []string { return nil }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedNumbers }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_SIGNAL_ALLOWED_NUMBERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_SIGNAL_URL" }

func build(_ context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	return New(*s.(*Config), env.Logger)
}

// doctor asks the daemon whether it runs (/api/v1/check) and which
// signal-cli it is (the version method).
func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := s.(*Config)
	c, err := New(*cfg, nil)
	if err != nil {
		return []channels.Finding{channels.Fail(err.Error(), "fix the OMEGA_SIGNAL_ settings")}
	}
	var out []channels.Finding
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.base()+"/api/v1/check", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = c.rpc.http.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = statusError{resp.StatusCode}
			}
		}
	}
	var v struct {
		Version string `json:"version"`
	}
	if err == nil {
		err = c.rpc.call(ctx, "version", nil, &v)
	}
	if err != nil {
		out = append(out, channels.Fail("signal-cli daemon at "+cfg.base()+": "+err.Error(),
			"start `signal-cli -a "+cfg.Account+" daemon --http 127.0.0.1:8080` and check OMEGA_SIGNAL_URL"))
	} else {
		out = append(out, channels.OK("signal-cli "+v.Version+" daemon at "+cfg.base()+" for "+cfg.Account))
	}
	if len(cfg.AllowedNumbers) == 0 {
		out = append(out, channels.Warn("no OMEGA_SIGNAL_ALLOWED_NUMBERS: everyone will be denied (or offered pairing)"))
	}
	return out
}
