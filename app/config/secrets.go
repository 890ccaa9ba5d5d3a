package config

import (
	"net/url"
	"strings"

	"github.com/omega-gateway/omega/internal/redact"
)

// Secrets lists every configured secret: tokens, API keys and the database
// password (from the URL's user info or a password= parameter).
func (c Config) Secrets() []string {
	s := []string{c.APIToken, c.Provider.AnthropicAPIKey, c.Provider.OpenAIAPIKey}
	// Every channel's secrets, enabled or not: a token set on a channel
	// turned off is still a secret.
	for _, d := range c.Descriptors() {
		if cs, ok := c.Channels[d.Name]; ok {
			s = append(s, cs.Secrets()...)
		}
	}
	if u, err := url.Parse(c.DatabaseURL); err == nil && c.DatabaseURL != "" {
		if p, ok := u.User.Password(); ok {
			s = append(s, p)
		}
		for k, vs := range u.Query() {
			if strings.EqualFold(k, "password") {
				s = append(s, vs...)
			}
		}
	}
	return s
}

// Redactor masks every configured secret.
func (c Config) Redactor() *redact.Redactor { return redact.New(c.Secrets()...) }
