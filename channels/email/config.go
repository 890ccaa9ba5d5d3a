package email

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// TLS modes of the IMAP and SMTP connections.
const (
	TLSImplicit = "tls"      // TLS from the first byte (IMAPS 993, SMTPS 465)
	TLSStart    = "starttls" // plain connection upgraded by STARTTLS (587, 143)
	// TLSPlain sends credentials and mail in the clear; Validate allows it
	// on loopback addresses only (a local test server or a local relay).
	TLSPlain = "plain"
)

// Config configures the email channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	// IMAPAddr is host:port of the IMAP server; it turns the channel on.
	IMAPAddr string `env:"EMAIL_IMAP_ADDR"`
	SMTPAddr string `env:"EMAIL_SMTP_ADDR"`
	Username string `env:"EMAIL_USERNAME"`
	Password string `env:"EMAIL_PASSWORD"`
	// From is the address replies come from; empty: the username.
	From    string `env:"EMAIL_FROM"`
	Mailbox string `env:"EMAIL_MAILBOX" envDefault:"INBOX"`
	IMAPTLS string `env:"EMAIL_IMAP_TLS" envDefault:"tls"`
	SMTPTLS string `env:"EMAIL_SMTP_TLS" envDefault:"starttls"`
	// AllowedAddresses are the senders' addresses; the channel drops mail
	// from anyone else before the pipeline (which enforces them too).
	AllowedAddresses Addresses `env:"EMAIL_ALLOWED_ADDRESSES"`
	// PollInterval is how often a server without IDLE is asked for new
	// mail.
	PollInterval time.Duration `env:"EMAIL_POLL_INTERVAL" envDefault:"30s"`
	// IdleRefresh ends each IDLE after this long to check the connection:
	// a server that stopped answering is noticed within it plus
	// CommandTimeout.
	IdleRefresh time.Duration `env:"EMAIL_IDLE_REFRESH" envDefault:"2m"`
	// CommandTimeout bounds each IMAP command and SMTP submission.
	CommandTimeout time.Duration `env:"EMAIL_COMMAND_TIMEOUT" envDefault:"30s"`
	// BackoffMax caps the wait between reconnection attempts.
	BackoffMax time.Duration `env:"EMAIL_BACKOFF_MAX" envDefault:"5s"`
}

// Validate reports configuration errors. It never includes the password.
func (c *Config) Validate() error {
	switch {
	case c.IMAPAddr == "" || c.SMTPAddr == "":
		return fmt.Errorf("email: EMAIL_IMAP_ADDR and EMAIL_SMTP_ADDR are both required")
	case c.Username == "" || c.Password == "":
		return fmt.Errorf("email: EMAIL_USERNAME and EMAIL_PASSWORD are required")
	case !strings.Contains(c.FromAddress(), "@"):
		return fmt.Errorf("email: EMAIL_FROM (or EMAIL_USERNAME) %q is not an address", c.FromAddress())
	case c.Mailbox == "":
		return fmt.Errorf("email: EMAIL_MAILBOX is empty")
	case c.PollInterval <= 0 || c.IdleRefresh <= 0 || c.CommandTimeout <= 0 || c.BackoffMax < 0:
		return fmt.Errorf("email: EMAIL_POLL_INTERVAL, EMAIL_IDLE_REFRESH and EMAIL_COMMAND_TIMEOUT must be positive, EMAIL_BACKOFF_MAX not negative")
	}
	if err := checkTLS("EMAIL_IMAP_TLS", c.IMAPTLS, "EMAIL_IMAP_ADDR", c.IMAPAddr); err != nil {
		return err
	}
	return checkTLS("EMAIL_SMTP_TLS", c.SMTPTLS, "EMAIL_SMTP_ADDR", c.SMTPAddr)
}

func checkTLS(variable, mode, addrVar, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("email: %s %q: want host:port", addrVar, addr)
	}
	switch mode {
	case TLSImplicit, TLSStart:
		return nil
	case TLSPlain:
		if !loopback(host) {
			return fmt.Errorf("email: %s=plain sends the password in the clear: allowed only for a loopback %s, not %q", variable, addrVar, host)
		}
		return nil
	}
	return fmt.Errorf("email: %s %q: want tls, starttls or plain", variable, mode)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// FromAddress is the address replies are sent from.
func (c *Config) FromAddress() string {
	if c.From != "" {
		return c.From
	}
	return c.Username
}

// Addresses is a comma-separated list of email addresses in the
// environment, kept lower-cased: senders are matched case-insensitively.
type Addresses []string

// UnmarshalText implements encoding.TextUnmarshaler for caarlos0/env.
func (a *Addresses) UnmarshalText(b []byte) error {
	var out Addresses
	for _, field := range strings.Split(string(b), ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		if !strings.Contains(field, "@") {
			return fmt.Errorf("email allowed address %q: not an address", field)
		}
		out = append(out, normalize(field))
	}
	*a = out
	return nil
}

// normalize is an address as the channel compares and reports it.
func normalize(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }
