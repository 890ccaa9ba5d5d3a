package discord

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Group modes.
const (
	GroupModeMention = "mention" // answer guild messages that mention or reply to the bot
	GroupModeAll     = "all"     // deliver every guild message the bot can read
)

// Config configures the Discord channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	// Token is the bot token (Developer Portal → Bot); it turns Discord on.
	Token string `env:"DISCORD_TOKEN"`
	// APIURL is the REST API's base; the gateway's address comes from its
	// GET /gateway, as Discord documents, so this one URL moves both.
	APIURL string `env:"DISCORD_API_URL" envDefault:"https://discord.com"`
	// AllowedUsers are Discord user ids (snowflakes); the pipeline
	// enforces them, and the first is the owner alerts go to.
	AllowedUsers IDs    `env:"DISCORD_ALLOWED_USERS"`
	GroupMode    string `env:"DISCORD_GROUP_MODE" envDefault:"mention"`
	// StallGrace is how long past the gateway's heartbeat interval the
	// connection may stay silent (no ACK, no event) before it is
	// abandoned as stalled; before HELLO it is the whole wait.
	StallGrace time.Duration `env:"DISCORD_STALL_GRACE" envDefault:"5s"`
	// BackoffMax caps the wait between reconnection attempts, so receiving
	// resumes within it once Discord answers again.
	BackoffMax time.Duration `env:"DISCORD_BACKOFF_MAX" envDefault:"5s"`
	// RequestTimeout bounds each REST call.
	RequestTimeout time.Duration `env:"DISCORD_REQUEST_TIMEOUT" envDefault:"30s"`
}

// Validate reports configuration errors. It never includes the token.
func (c Config) Validate() error {
	if c.Token == "" {
		return fmt.Errorf("discord: DISCORD_TOKEN is empty")
	}
	if strings.HasPrefix(c.Token, "Bot ") {
		return fmt.Errorf("discord: DISCORD_TOKEN starts with \"Bot \": give the token alone")
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("discord: DISCORD_API_URL %q: want http(s)://host", c.APIURL)
	}
	switch c.GroupMode {
	case GroupModeMention, GroupModeAll, "":
	default:
		return fmt.Errorf("discord: DISCORD_GROUP_MODE %q: want mention or all", c.GroupMode)
	}
	if c.StallGrace <= 0 || c.BackoffMax < 0 || c.RequestTimeout <= 0 {
		return fmt.Errorf("discord: DISCORD_STALL_GRACE and DISCORD_REQUEST_TIMEOUT must be positive, DISCORD_BACKOFF_MAX not negative")
	}
	return nil
}

// IDs is a comma-separated list of Discord ids (snowflakes) in the
// environment.
type IDs []string

// UnmarshalText implements encoding.TextUnmarshaler for caarlos0/env.
func (ids *IDs) UnmarshalText(b []byte) error {
	var out IDs
	for _, field := range strings.Split(string(b), ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		if !snowflake(field) {
			return fmt.Errorf("discord allowed user %q: want a numeric user id (Developer Mode → Copy User ID)", field)
		}
		out = append(out, field)
	}
	*ids = out
	return nil
}

func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
