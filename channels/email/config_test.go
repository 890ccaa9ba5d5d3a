package email

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/omega-gateway/omega/channels"
)

func validConfig() Config {
	return Config{IMAPAddr: "imap.example.com:993", SMTPAddr: "smtp.example.com:587", Username: "bot@example.com",
		Password: "pw", Mailbox: "INBOX", IMAPTLS: TLSImplicit, SMTPTLS: TLSStart,
		PollInterval: 1, IdleRefresh: 1, CommandTimeout: 1}
}

func TestConfigValidate(t *testing.T) {
	if err := (&Config{}).Validate(); err == nil {
		t.Error("empty config accepted")
	}
	good := validConfig()
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	bad := map[string]func(c *Config){
		"EMAIL_IMAP_TLS=plain sends the password": func(c *Config) { c.IMAPTLS = TLSPlain },
		"EMAIL_SMTP_TLS \"ssl\"":                  func(c *Config) { c.SMTPTLS = "ssl" },
		"EMAIL_SMTP_ADDR \"smtp\"":                func(c *Config) { c.SMTPAddr = "smtp" },
		"not an address":                          func(c *Config) { c.Username = "bot" },
		"EMAIL_PASSWORD are required":             func(c *Config) { c.Password = "" },
	}
	for want, change := range bad {
		c := validConfig()
		change(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	local := validConfig()
	local.IMAPAddr, local.SMTPAddr, local.IMAPTLS, local.SMTPTLS = "127.0.0.1:143", "localhost:25", TLSPlain, TLSPlain
	if err := local.Validate(); err != nil {
		t.Errorf("plain on loopback: %v", err)
	}
}

func TestAllowedAddresses(t *testing.T) {
	var a Addresses
	if err := a.UnmarshalText([]byte(" Alice@Example.com, ,bob@example.com")); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != "[alice@example.com bob@example.com]" {
		t.Errorf("got %v", a)
	}
	if err := a.UnmarshalText([]byte("alice")); err == nil {
		t.Error("accepted a name without @")
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		step string
		code int
		want error
	}{
		{"submit", 550, channels.ErrBlocked},
		{"submit", 554, channels.ErrRejected},
		{"login", 535, channels.ErrRejected},
		{"submit", 451, nil},
	}
	for _, c := range cases {
		err := classify(c.step, &smtp.SMTPError{Code: c.code, Message: "no"})
		if c.want == nil {
			if errors.Is(err, channels.ErrBlocked) || errors.Is(err, channels.ErrRejected) {
				t.Errorf("%s %d: %v should be retryable", c.step, c.code, err)
			}
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s %d: %v, want %v", c.step, c.code, err, c.want)
		}
	}
}
