package matrix

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Config configures the Matrix channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	// Homeserver is the client-server API's base URL; it turns the
	// channel on.
	Homeserver  string `env:"MATRIX_HOMESERVER"`
	UserID      string `env:"MATRIX_USER_ID"`
	AccessToken string `env:"MATRIX_ACCESS_TOKEN"`
	// AllowedUsers are Matrix user ids (@name:server): only their invites
	// are accepted, and the pipeline answers only them.
	AllowedUsers UserIDs `env:"MATRIX_ALLOWED_USERS"`
	// SyncTimeout is /sync's long-poll timeout; a sync unanswered for it
	// plus StallGrace is abandoned as stalled.
	SyncTimeout time.Duration `env:"MATRIX_SYNC_TIMEOUT" envDefault:"30s"`
	StallGrace  time.Duration `env:"MATRIX_STALL_GRACE" envDefault:"5s"`
	// RequestTimeout bounds every other request (sends, uploads, joins).
	RequestTimeout time.Duration `env:"MATRIX_REQUEST_TIMEOUT" envDefault:"30s"`
	// BackoffMax caps the wait between failed syncs, so receiving resumes
	// within it once the homeserver answers again.
	BackoffMax time.Duration `env:"MATRIX_BACKOFF_MAX" envDefault:"5s"`
}

// Validate reports configuration errors. It never includes the token.
func (c *Config) Validate() error {
	u, err := url.Parse(c.Homeserver)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return fmt.Errorf("matrix: MATRIX_HOMESERVER %q: want an http(s) URL such as https://matrix.example.org", c.Homeserver)
	case !validUserID(c.UserID):
		return fmt.Errorf("matrix: MATRIX_USER_ID %q: want @name:server", c.UserID)
	case c.AccessToken == "":
		return fmt.Errorf("matrix: MATRIX_ACCESS_TOKEN is empty")
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("matrix: MATRIX_HOMESERVER %q sends the access token in the clear: http is allowed for a loopback host only; use https", c.Homeserver)
	case c.SyncTimeout <= 0 || c.RequestTimeout <= 0 || c.StallGrace < 0 || c.BackoffMax < 0:
		return fmt.Errorf("matrix: MATRIX_SYNC_TIMEOUT and MATRIX_REQUEST_TIMEOUT must be positive, MATRIX_STALL_GRACE and MATRIX_BACKOFF_MAX not negative")
	}
	return nil
}

// UserIDs is a comma-separated list of Matrix user ids in the
// environment.
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
			return fmt.Errorf("matrix allowed user %q: want @name:server", field)
		}
		out = append(out, field)
	}
	*u = out
	return nil
}

func validUserID(s string) bool {
	local, server, ok := strings.Cut(s, ":")
	return ok && len(local) > 1 && local[0] == '@' && server != ""
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
