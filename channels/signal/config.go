package signal

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config configures the Signal channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	// URL is the signal-cli daemon's HTTP endpoint (`signal-cli -a
	// +NUMBER daemon --http 127.0.0.1:8080`); it turns Signal on.
	URL string `env:"SIGNAL_URL"`
	// Account is the daemon's own number: mentions of it and replies to
	// it address omega in groups.
	Account string `env:"SIGNAL_ACCOUNT"`
	// AllowedNumbers are senders' numbers (+E.164) or ACIs (UUIDs); the
	// pipeline enforces them.
	AllowedNumbers Numbers `env:"SIGNAL_ALLOWED_NUMBERS"`
	// KeepAlive is the daemon's keep-alive interval on its event stream
	// (signal-cli sends one every 15 s); a stream silent for it plus
	// StallGrace is a stall and omega reconnects.
	KeepAlive  time.Duration `env:"SIGNAL_KEEPALIVE" envDefault:"15s"`
	StallGrace time.Duration `env:"SIGNAL_STALL_GRACE" envDefault:"5s"`
	// BackoffMax caps the wait between reconnections.
	BackoffMax time.Duration `env:"SIGNAL_BACKOFF_MAX" envDefault:"5s"`
	// Catchup is how old a message the daemon still holds may be when
	// omega starts and asks for what it missed; older ones are skipped.
	Catchup time.Duration `env:"SIGNAL_CATCHUP" envDefault:"1h"`
}

// Validate reports configuration errors.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return fmt.Errorf("signal: SIGNAL_URL is empty")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("signal: SIGNAL_URL %q: want the daemon's http://host:port", c.URL)
	case !validNumber(c.Account):
		return fmt.Errorf("signal: SIGNAL_ACCOUNT %q: want the daemon's number as +E.164 (+4915112345678)", c.Account)
	case c.KeepAlive <= 0 || c.StallGrace <= 0 || c.BackoffMax < 0 || c.Catchup < 0:
		return fmt.Errorf("signal: SIGNAL_KEEPALIVE and SIGNAL_STALL_GRACE must be positive, SIGNAL_BACKOFF_MAX and SIGNAL_CATCHUP not negative")
	}
	return nil
}

// base is the URL without a trailing slash.
func (c *Config) base() string { return strings.TrimRight(c.URL, "/") }

// Numbers is a comma-separated list of numbers (+E.164) or ACIs.
type Numbers []string

// UnmarshalText implements encoding.TextUnmarshaler for caarlos0/env.
func (n *Numbers) UnmarshalText(b []byte) error {
	var out Numbers
	for _, field := range strings.Split(string(b), ",") {
		field = strings.ReplaceAll(strings.TrimSpace(field), " ", "")
		if field == "" {
			continue
		}
		if !validNumber(field) && !validACI(field) {
			return fmt.Errorf("signal allowed number %q: want +E.164 (+4915112345678) or an ACI (UUID)", field)
		}
		out = append(out, strings.ToLower(field))
	}
	*n = out
	return nil
}

func validNumber(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func validACI(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range strings.ToLower(s) {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case (r < '0' || r > '9') && (r < 'a' || r > 'f'):
			return false
		}
	}
	return true
}
