package config

import (
	"errors"
	"strings"
	"testing"
)

func TestLoadDefaults(t *testing.T) {
	c, err := LoadFrom(map[string]string{"HOME": "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend() != "sqlite" || c.HTTPAddr != "127.0.0.1:8787" || !strings.HasSuffix(c.SQLitePath(), "/.omega/omega.db") {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	_, err := LoadFrom(map[string]string{
		"OMEGA_DATA_DIR":     "/tmp/x",
		"OMEGA_DATABASE_URL": "mysql://x",
		"OMEGA_LOG_LEVEL":    "loud",
		"OMEGA_HTTP_ADDR":    "0.0.0.0",
		"OMEGA_SANDBOX":      "jail",
		"OMEGA_TIMEZONE":     "Mars/Olympus",
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, want := range []string{"OMEGA_DATABASE_URL", "OMEGA_LOG_LEVEL", "OMEGA_HTTP_ADDR", "OMEGA_SANDBOX", "OMEGA_TIMEZONE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
}

// Without a token a non-loopback address is still valid: serve generates
// one (config.EnsureAPIToken), so a fresh container starts.
func TestNonLoopbackWithoutToken(t *testing.T) {
	c, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_HTTP_ADDR": "0.0.0.0:8787"})
	if err != nil || !c.HTTPNeedsToken() {
		t.Fatalf("err %v, needs token %v", err, c.HTTPNeedsToken())
	}
	if c, _ := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x"}); c.HTTPNeedsToken() {
		t.Fatal("the loopback default asks for a token")
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	c, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_API_TOKEN": "api-tok-123",
		"OMEGA_DATABASE_URL": "postgres://omega:db-pass-456@db/omega", "OMEGA_OPENAI_API_KEY": "sk-789xyz"})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Redactor().String("api-tok-123 postgres://omega:db-pass-456@db sk-789xyz")
	if got != "[REDACTED] postgres://omega:[REDACTED]@db [REDACTED]" {
		t.Fatalf("redacted = %q", got)
	}
}

func TestNonLoopbackWithToken(t *testing.T) {
	if _, err := LoadFrom(map[string]string{"OMEGA_DATA_DIR": "/tmp/x", "OMEGA_HTTP_ADDR": "0.0.0.0:8787", "OMEGA_API_TOKEN": "s3cret"}); err != nil {
		t.Fatal(err)
	}
}

func TestBadDurationIsAnError(t *testing.T) {
	if _, err := LoadFrom(map[string]string{"OMEGA_CONVERSATION_IDLE": "soon"}); err == nil {
		t.Fatal("bad duration accepted")
	}
}

func TestHeartbeatSettings(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"OMEGA_DATA_DIR": "/tmp/x"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, bad := range []map[string]string{
		base("OMEGA_HEARTBEAT_ACTIVE_HOURS", "8-22"),
		base("OMEGA_HEARTBEAT_TARGET", "pigeon:me@example.com"),
		base("OMEGA_HEARTBEAT_TARGET", "telegram:"),
		base("OMEGA_HEARTBEAT_INTERVAL", "0s"),
	} {
		if _, err := LoadFrom(bad); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
	cases := []struct {
		vars          map[string]string
		channel, chat string
	}{
		{base(), "", ""},
		{base("OMEGA_HEARTBEAT_TARGET", "whatsapp:+34600111222"), "whatsapp", "+34600111222"},
		{base("OMEGA_TELEGRAM_TOKEN", "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi", "OMEGA_TELEGRAM_ALLOWED_USERS", "42,7"), "telegram", "42"},
	}
	for _, c := range cases {
		cfg, err := LoadFrom(c.vars)
		if err != nil {
			t.Fatal(err)
		}
		ch, chat, err := cfg.HeartbeatDestination()
		if err != nil || ch != c.channel || chat != c.chat {
			t.Errorf("%v: %s:%s %v", c.vars, ch, chat, err)
		}
		if !cfg.HeartbeatEnabled || cfg.HeartbeatInterval.Minutes() != 30 {
			t.Errorf("defaults: %v %s", cfg.HeartbeatEnabled, cfg.HeartbeatInterval)
		}
	}
}

func TestMemorySettings(t *testing.T) {
	c, err := LoadFrom(map[string]string{"HOME": "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if c.GCPercent != 50 || c.MemoryLimit != 0 {
		t.Fatalf("defaults: GOGC %d, limit %s", c.GCPercent, c.MemoryLimit)
	}
	for in, want := range map[string]ByteSize{"48MiB": 48 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "1000": 1000, "7B": 7, " 2TiB ": 2 << 40} {
		c, err := LoadFrom(map[string]string{"HOME": "/home/u", "OMEGA_MEMORY_LIMIT": in})
		if err != nil || c.MemoryLimit != want {
			t.Errorf("OMEGA_MEMORY_LIMIT=%q: %s, %v; want %s", in, c.MemoryLimit, err, want)
		}
	}
	for _, in := range []string{"48MB", "-1", "lots", "1.5GiB", "99999999999TiB"} {
		if _, err := LoadFrom(map[string]string{"HOME": "/home/u", "OMEGA_MEMORY_LIMIT": in}); err == nil {
			t.Errorf("OMEGA_MEMORY_LIMIT=%q accepted", in)
		}
	}
	if _, err := LoadFrom(map[string]string{"HOME": "/home/u", "OMEGA_GOGC": "0"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("OMEGA_GOGC=0: %v, want ErrInvalid", err)
	}
}

// A value the parser cannot read is reported as the variable a person set
// and what it wants, beside the others, never as a Go field.
func TestUnreadableValuesNameTheirVariables(t *testing.T) {
	_, err := LoadFrom(map[string]string{
		"HOME":                     "/home/u",
		"OMEGA_HEARTBEAT_INTERVAL": "5",
		"OMEGA_CLASSIFY":           "maybe",
		"OMEGA_HISTORY_LIMIT":      "ten",
		"OMEGA_LOG_LEVEL":          "loud",
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, want := range []string{
		`OMEGA_HEARTBEAT_INTERVAL must be a duration such as 30s, 5m or 1h30m (got "5")`,
		`OMEGA_CLASSIFY must be true or false (got "maybe")`,
		`OMEGA_HISTORY_LIMIT must be a whole number (got "ten")`,
		`OMEGA_LOG_LEVEL must be debug, info, warn or error (got "loud")`, // and the others' problems
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "field") || strings.Count(err.Error(), "OMEGA_HEARTBEAT_INTERVAL") != 1 {
		t.Errorf("error names a Go field, or a variable twice:\n%v", err)
	}
}

// OMEGA_HTTP_ADDR unset listens on the default address; set but empty it
// turns the HTTP channel off, as the README says (a default applied to the
// empty value kept it on 127.0.0.1:8787).
func TestEmptyHTTPAddrTurnsTheChannelOff(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u"}, "127.0.0.1:8787"},
		{map[string]string{"HOME": "/home/u", "OMEGA_HTTP_ADDR": ""}, ""},
		{map[string]string{"HOME": "/home/u", "OMEGA_HTTP_ADDR": "127.0.0.1:9999"}, "127.0.0.1:9999"},
	} {
		c, err := LoadFrom(tc.vars)
		if err != nil || c.HTTPAddr != tc.want {
			t.Errorf("%v: HTTPAddr = %q, %v; want %q", tc.vars, c.HTTPAddr, err, tc.want)
		}
	}
}
