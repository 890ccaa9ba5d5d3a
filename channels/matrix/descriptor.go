package matrix

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/omega-gateway/omega/channels"
)

// Descriptor describes the Matrix channel to the registry.
var Descriptor = channels.Descriptor{
	Name:         Name,
	Title:        "Matrix",
	Settings:     func() channels.Settings { return &Config{} },
	Hint:         formatHint,
	Capabilities: channels.Capabilities{Images: true, Edits: true, Typing: true, Groups: true, Alerts: true},
	ChatForm:     "room",
	Build:        build,
	Doctor:       doctor,
}

// On implements channels.Settings: a homeserver turns Matrix on.
func (c *Config) On() bool { return c.Homeserver != "" }

// Secrets implements channels.Settings.
func (c *Config) Secrets() []string { return []string{c.AccessToken} }

// Allowed implements channels.Settings.
func (c *Config) Allowed() []string { return c.AllowedUsers }

// AllowlistVar implements channels.Settings.
func (c *Config) AllowlistVar() string { return "OMEGA_MATRIX_ALLOWED_USERS" }

// EnableVar implements channels.Settings.
func (c *Config) EnableVar() string { return "OMEGA_MATRIX_HOMESERVER" }

// build keeps the sync position in omega's database when there is one.
func build(ctx context.Context, s channels.Settings, env channels.Env) (channels.Channel, error) {
	var store tokens
	if env.DB != nil {
		t, err := openTokens(ctx, env.DB, env.Dialect)
		if err != nil {
			return nil, err
		}
		store = t
	}
	return New(*s.(*Config), env.Logger, store)
}

// doctor asks the homeserver which versions it speaks and whom the
// access token belongs to.
func doctor(ctx context.Context, s channels.Settings, _ channels.Env) []channels.Finding {
	cfg := s.(*Config)
	c, err := New(*cfg, nil, nil)
	if err != nil {
		return []channels.Finding{channels.Fail(err.Error(), "fix the OMEGA_MATRIX_ settings")}
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	versions, err := c.cli.Versions(rctx)
	if err != nil {
		return []channels.Finding{channels.Fail("homeserver "+cfg.Homeserver+" unreachable: "+err.Error(), "check OMEGA_MATRIX_HOMESERVER (the client API's base URL)")}
	}
	out := []channels.Finding{channels.OK("homeserver " + cfg.Homeserver + " answers (" + latest(versions) + ")")}
	who, err := c.cli.Whoami(rctx)
	switch {
	case err != nil:
		out = append(out, channels.Fail("access token refused: "+err.Error(), "set OMEGA_MATRIX_ACCESS_TOKEN to the bot account's token"))
	case who != cfg.UserID:
		out = append(out, channels.Fail("the access token belongs to "+who+", not "+cfg.UserID, "set OMEGA_MATRIX_USER_ID to the token's user"))
	default:
		out = append(out, channels.OK("logged in as "+cfg.UserID))
	}
	if len(cfg.AllowedUsers) == 0 {
		out = append(out, channels.Warn("no OMEGA_MATRIX_ALLOWED_USERS: every invite will be refused"))
	}
	return out
}

// latest is the newest spec version the homeserver lists.
func latest(versions []string) string {
	if len(versions) == 0 {
		return "no versions listed"
	}
	return "spec " + slices.MaxFunc(versions, compareVersions)
}

// compareVersions orders "v1.2" before "v1.11" and "r0.6.1".
func compareVersions(a, b string) int {
	if a == "" || b == "" {
		return len(a) - len(b)
	}
	pa, pb := strings.Split(strings.TrimLeft(a, "rv"), "."), strings.Split(strings.TrimLeft(b, "rv"), ".")
	if (a[0] == 'r') != (b[0] == 'r') {
		if a[0] == 'r' {
			return -1
		}
		return 1
	}
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}
