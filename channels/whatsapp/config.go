// Package whatsapp connects omega to WhatsApp through the WhatsApp Web
// multi-device protocol (go.mau.fi/whatsmeow). The linked device's keys live
// in omega's own database, next to the event log.
package whatsapp

import (
	"fmt"
	"slices"
	"strings"
)

// Config is read from the environment; the caller nests it under the
// OMEGA_ prefix.
type Config struct {
	Enabled bool `env:"WHATSAPP_ENABLED" envDefault:"false"`
	// AllowedNumbers is parsed and normalised here but enforced by the
	// pipeline: the channel delivers every message it receives.
	AllowedNumbers PhoneNumbers `env:"WHATSAPP_ALLOWED_NUMBERS"`
	// Groups enables group chats; without it group messages are dropped.
	Groups bool `env:"WHATSAPP_GROUPS" envDefault:"false"`
}

// PhoneNumbers is a list of international phone numbers reduced to digits
// ("+1 (555) 010-9999" becomes "15550109999"), the form WhatsApp uses in
// JIDs and therefore the form of Incoming.SenderID.
type PhoneNumbers []string

// UnmarshalText parses a comma-separated list.
func (p *PhoneNumbers) UnmarshalText(text []byte) error {
	var out PhoneNumbers
	for raw := range strings.SplitSeq(string(text), ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		n := NormalizePhone(raw)
		if len(n) < 7 {
			return fmt.Errorf("invalid phone number %q: need the full international number", raw)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	*p = out
	return nil
}

// Contains reports whether number (in any common notation) is in the list.
func (p PhoneNumbers) Contains(number string) bool {
	n := NormalizePhone(number)
	return n != "" && slices.Contains(p, n)
}

// NormalizePhone keeps only the digits of a phone number and drops the
// international "00" dialling prefix.
func NormalizePhone(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return strings.TrimPrefix(b.String(), "00")
}
