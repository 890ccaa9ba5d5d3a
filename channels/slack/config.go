package slack

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config configures the Slack channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	// BotToken (xoxb-) calls the Web API; with AppToken it turns Slack on.
	BotToken string `env:"SLACK_BOT_TOKEN"`
	// AppToken (xapp-, scope connections:write) opens the Socket Mode
	// connection, so omega needs no public URL.
	AppToken string `env:"SLACK_APP_TOKEN"`
	// APIURL is the Web API's base ("https://slack.com/api/").
	APIURL string `env:"SLACK_API_URL" envDefault:"https://slack.com/api/"`
	// AllowedUsers are Slack member ids ("U012AB3CD"); the pipeline
	// enforces them.
	AllowedUsers UserIDs `env:"SLACK_ALLOWED_USERS"`
	// KeepAlive is how often omega pings the socket; a socket silent for
	// KeepAlive plus StallGrace is a stall and omega reconnects.
	KeepAlive  time.Duration `env:"SLACK_KEEPALIVE" envDefault:"10s"`
	StallGrace time.Duration `env:"SLACK_STALL_GRACE" envDefault:"5s"`
	// BackoffMax caps the wait between reconnections, so receiving
	// resumes within it once Slack answers again.
	BackoffMax time.Duration `env:"SLACK_BACKOFF_MAX" envDefault:"5s"`
}

// Validate reports configuration errors. It never includes a token.
func (c *Config) Validate() error {
	switch {
	case c.BotToken == "" || c.AppToken == "":
		return fmt.Errorf("slack: SLACK_BOT_TOKEN (xoxb-) and SLACK_APP_TOKEN (xapp-) are both required")
	case !strings.HasPrefix(c.BotToken, "xoxb-"):
		return fmt.Errorf("slack: SLACK_BOT_TOKEN is not a bot token (want xoxb-...)")
	case !strings.HasPrefix(c.AppToken, "xapp-"):
		return fmt.Errorf("slack: SLACK_APP_TOKEN is not an app-level token (want xapp-...)")
	case c.KeepAlive <= 0 || c.StallGrace <= 0 || c.BackoffMax < 0:
		return fmt.Errorf("slack: SLACK_KEEPALIVE and SLACK_STALL_GRACE must be positive, SLACK_BACKOFF_MAX not negative")
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("slack: SLACK_API_URL %q: want an http(s) URL", c.APIURL)
	}
	return nil
}

// apiURL is the API base as slack-go wants it: ending in a slash.
func (c *Config) apiURL() string {
	if strings.HasSuffix(c.APIURL, "/") {
		return c.APIURL
	}
	return c.APIURL + "/"
}

// UserIDs is a comma-separated list of Slack member ids.
type UserIDs []string

// UnmarshalText implements encoding.TextUnmarshaler for caarlos0/env.
func (u *UserIDs) UnmarshalText(b []byte) error {
	var out UserIDs
	for _, field := range strings.Split(string(b), ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		if !validUserID(field) {
			return fmt.Errorf("slack allowed user %q: want a member id such as U012AB3CD", field)
		}
		out = append(out, field)
	}
	*u = out
	return nil
}

func validUserID(id string) bool {
	if len(id) < 3 || (id[0] != 'U' && id[0] != 'W') {
		return false
	}
	for _, r := range id {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
