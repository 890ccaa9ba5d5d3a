package telegram

import (
	"reflect"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"
)

func TestConfigFromEnvironment(t *testing.T) {
	var outer struct {
		Telegram Config `envPrefix:"OMEGA_"`
	}
	err := env.ParseWithOptions(&outer, env.Options{Environment: map[string]string{
		"OMEGA_TELEGRAM_TOKEN":         "123:abc",
		"OMEGA_TELEGRAM_ALLOWED_USERS": "1, 22,333",
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := outer.Telegram
	if c.APIURL != "https://api.telegram.org" || c.GroupMode != GroupModeMention || c.TranscribeModel != "whisper-1" || c.TranscribeURL != "" {
		t.Errorf("defaults = %+v", c)
	}
	if !reflect.DeepEqual([]int64(c.AllowedUsers), []int64{1, 22, 333}) || !reflect.DeepEqual(c.AllowedUserIDs(), []string{"1", "22", "333"}) {
		t.Errorf("allowed users = %v", c.AllowedUsers)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err == nil {
		t.Error("empty token accepted")
	}
	err := (Config{Token: "secret-token", GroupMode: "some"}).Validate()
	if err == nil || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("bad group mode: %v", err)
	}
	if _, err := ParseAllowedUsers("1,x"); err == nil {
		t.Error("non-numeric id accepted")
	}
	if _, err := New(Config{Token: "not-a-token"}, nil); err == nil || strings.Contains(err.Error(), "not-a-token") {
		t.Errorf("New with malformed token: %v", err)
	}
}
