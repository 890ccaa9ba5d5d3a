package discord

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Token: "tok", APIURL: "https://discord.com", GroupMode: GroupModeMention, StallGrace: 5 * time.Second,
		BackoffMax: 5 * time.Second, RequestTimeout: 30 * time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mut  func(*Config)
		want string
	}{
		"no token":     {func(c *Config) { c.Token = "" }, "DISCORD_TOKEN is empty"},
		"Bot prefix":   {func(c *Config) { c.Token = "Bot secret-value" }, "give the token alone"},
		"bad url":      {func(c *Config) { c.APIURL = "discord.com" }, "DISCORD_API_URL"},
		"group mode":   {func(c *Config) { c.GroupMode = "some" }, "DISCORD_GROUP_MODE"},
		"zero grace":   {func(c *Config) { c.StallGrace = 0 }, "DISCORD_STALL_GRACE"},
		"neg. backoff": {func(c *Config) { c.BackoffMax = -time.Second }, "DISCORD_BACKOFF_MAX"},
	} {
		c := ok
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret-value") {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	var ids IDs
	if err := ids.UnmarshalText([]byte(" 123, 456 ,")); err != nil || len(ids) != 2 || ids[1] != "456" {
		t.Errorf("ids %v, %v", ids, err)
	}
	if err := ids.UnmarshalText([]byte("alice#1234")); err == nil || !strings.Contains(err.Error(), "Copy User ID") {
		t.Errorf("a name was taken as an id: %v", err)
	}
}
