package slack

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/omega-gateway/omega/channels"
)

// Name is the channel's name in sender ids and targets ("slack:<chat>").
const Name = "slack"

// formatHint tells the model how its replies are shown.
const formatHint = "Replies are shown in Slack, which renders its own mrkdwn: bold, italics, strikethrough, inline code, code blocks, quotes, lists and links are converted from your Markdown; tables and headings become plain lines. Keep replies conversational."

// Descriptor describes the Slack channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Slack",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Edits: true, Groups: true, Alerts: true},
	ChatForm:     "channel",
	Build:        build,
	Doctor:       doctor,
}

// On implements channels.Settings: either token turns Slack on (and
// Validate then asks for the other).
func (c *Config) On() bool { return c.BotToken != "" || c.AppToken != "" }

// Secrets implements channels.Settings.
func (c *Config) Secrets() []string { return []string{c.BotToken, c.AppToken} }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedUsers }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_SLACK_ALLOWED_USERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_SLACK_BOT_TOKEN" }

func build(_ context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	return New(*s.(*Config), env.Logger)
}

// doctor checks both tokens as the channel uses them: auth.test with the
// bot token, apps.connections.open with the app-level token.
func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := s.(*Config)
	if err := cfg.Validate(); err != nil {
		return []channels.Finding{channels.Fail(err.Error(), "set OMEGA_SLACK_BOT_TOKEN and OMEGA_SLACK_APP_TOKEN from the app's settings")}
	}
	var out []channels.Finding
	if who, err := newAPI(cfg).AuthTestContext(ctx); err != nil {
		out = append(out, channels.Fail("auth.test: "+describe(err), "check OMEGA_SLACK_BOT_TOKEN (OAuth & Permissions, xoxb-) and OMEGA_SLACK_API_URL"))
	} else {
		out = append(out, channels.OK("bot @"+who.User+" ("+who.UserID+") in workspace "+who.Team))
	}
	if _, _, err := newAPI(cfg).StartSocketModeContext(ctx); err != nil {
		out = append(out, channels.Fail("apps.connections.open: "+describe(err), "check OMEGA_SLACK_APP_TOKEN (Basic Information → App-Level Tokens, scope connections:write) and that Socket Mode is on"))
	} else {
		out = append(out, channels.OK("Socket Mode connection offered"))
	}
	if len(cfg.AllowedUsers) == 0 {
		out = append(out, channels.Warn("no OMEGA_SLACK_ALLOWED_USERS: everyone will be denied (or offered pairing)"))
	}
	return out
}

// newAPI is a Web API client with the bot token, sending the app-level
// token on apps.connections.open.
func newAPI(cfg *Config) *slack.Client {
	return slack.New(cfg.BotToken, slack.OptionAPIURL(cfg.apiURL()), slack.OptionAppLevelToken(cfg.AppToken))
}
