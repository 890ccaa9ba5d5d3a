package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/omega-gateway/omega/channels"
)

// Descriptor describes the Discord channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Discord",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Typing: true, Groups: true, Alerts: true},
	ChatForm:     "user id",
	Build:        build,
	Doctor:       doctor,
}

// On implements channels.Settings: a bot token turns Discord on.
func (c *Config) On() bool { return c.Token != "" }

// Secrets implements channels.Settings.
func (c *Config) Secrets() []string { return []string{c.Token} }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedUsers }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_DISCORD_ALLOWED_USERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_DISCORD_TOKEN" }

func build(ctx context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	cur, err := openCursors(ctx, env.DB, env.Dialect)
	if err != nil {
		return nil, err
	}
	return New(*s.(*Config), env.Logger, withCursors(cur))
}

// doctor asks the REST API who the token belongs to and opens the
// gateway as far as its HELLO.
func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := *s.(*Config)
	c, err := New(cfg, nil)
	if err != nil {
		return []channels.Finding{channels.Fail(err.Error(), "fix the OMEGA_DISCORD_ settings")}
	}
	var out []channels.Finding
	if u, err := c.sess.User("@me", discordgo.WithContext(ctx)); err != nil {
		out = append(out, channels.Fail("the API refused or did not answer: "+restReason(err), "check OMEGA_DISCORD_TOKEN (Developer Portal → Bot → Reset Token) and OMEGA_DISCORD_API_URL"))
	} else {
		out = append(out, channels.OK("bot "+u.Username+" ("+u.ID+")"))
	}
	out = append(out, c.contentIntent())
	if interval, err := c.hello(ctx); err != nil {
		out = append(out, channels.Fail("gateway: "+err.Error(), "check that this machine reaches Discord's gateway (wss, port 443) and OMEGA_DISCORD_API_URL"))
	} else {
		out = append(out, channels.OK(fmt.Sprintf("gateway reachable (heartbeat every %d ms)", interval)))
	}
	if len(cfg.AllowedUsers) == 0 {
		out = append(out, channels.Warn("no OMEGA_DISCORD_ALLOWED_USERS: everyone will be denied (or get a pairing code)"))
	}
	return out
}

// Application flags that say the Message Content intent is on
// (GATEWAY_MESSAGE_CONTENT, and _LIMITED for bots in fewer than 100
// servers).
const appFlagsMessageContent = 1<<18 | 1<<19

// contentIntent checks that the Message Content intent is on: without it
// Discord refuses the connection (close 4014).
func (c *Channel) contentIntent() channels.Finding {
	app, err := c.sess.Application("@me")
	switch {
	case err != nil:
		return channels.Warn("could not read the application's intents: " + restReason(err))
	case app.Flags&appFlagsMessageContent == 0:
		return channels.Fail("the Message Content intent is off: Discord will refuse the bot", "switch on Message Content Intent under Developer Portal → Bot → Privileged Gateway Intents")
	}
	return channels.OK("Message Content intent on")
}

// hello asks the API for the gateway, connects and reads its HELLO.
func (c *Channel) hello(ctx context.Context) (int64, error) {
	gw, err := c.sess.Gateway(discordgo.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("GET /gateway: %s", restReason(err))
	}
	conn, resp, err := c.sess.Dialer.DialContext(ctx, gw+"?v="+discordgo.APIVersion+"&encoding=json", nil)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", gw, err)
	}
	defer conn.Close()
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	var hello struct {
		Op int `json:"op"`
		D  struct {
			HeartbeatInterval int64 `json:"heartbeat_interval"`
		} `json:"d"`
	}
	if err := conn.ReadJSON(&hello); err != nil {
		return 0, fmt.Errorf("no HELLO from %s: %w", gw, err)
	}
	if hello.Op != 10 {
		return 0, fmt.Errorf("%s sent op %d before HELLO", gw, hello.Op)
	}
	return hello.D.HeartbeatInterval, nil
}

// restReason is a REST failure without the response body's noise.
func restReason(err error) string {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		msg := ""
		if re.Message != nil {
			msg = " " + re.Message.Message
		} else {
			var body struct{ Message string }
			if json.Unmarshal(re.ResponseBody, &body) == nil && body.Message != "" {
				msg = " " + body.Message
			}
		}
		return fmt.Sprintf("HTTP %d%s", re.Response.StatusCode, msg)
	}
	return err.Error()
}
