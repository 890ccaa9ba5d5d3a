package matrix

import (
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
)

func TestConfigValidate(t *testing.T) {
	good := Config{Homeserver: "https://matrix.example.org", UserID: "@omega:example.org", AccessToken: "syt_secret",
		SyncTimeout: 30 * time.Second, StallGrace: 5 * time.Second, RequestTimeout: 30 * time.Second, BackoffMax: 5 * time.Second}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(c *Config)
		want   string
	}{
		{func(c *Config) { c.Homeserver = "matrix.example.org" }, "want an http(s) URL"},
		{func(c *Config) { c.Homeserver = "http://matrix.example.org" }, "in the clear"},
		{func(c *Config) { c.UserID = "omega" }, `MATRIX_USER_ID "omega": want @name:server`},
		{func(c *Config) { c.AccessToken = "" }, "MATRIX_ACCESS_TOKEN is empty"},
		{func(c *Config) { c.SyncTimeout = 0 }, "must be positive"},
	} {
		c := good
		tc.change(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "syt_secret") {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	local := good
	local.Homeserver = "http://127.0.0.1:8008"
	if err := local.Validate(); err != nil {
		t.Errorf("a loopback homeserver over http: %v", err)
	}
}

func TestAllowedUsersFromEnvironment(t *testing.T) {
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: map[string]string{"MATRIX_ALLOWED_USERS": " @a:x.org, ,@b:y.org"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.AllowedUsers, "|") != "@a:x.org|@b:y.org" || c.SyncTimeout != 30*time.Second || c.BackoffMax != 5*time.Second {
		t.Fatalf("parsed %+v", c)
	}
	err := env.ParseWithOptions(&c, env.Options{Environment: map[string]string{"MATRIX_ALLOWED_USERS": "alice"}})
	if err == nil || !strings.Contains(err.Error(), `matrix allowed user "alice": want @name:server`) {
		t.Fatalf("a bad user id: %v", err)
	}
}
