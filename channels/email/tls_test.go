package email

import (
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/email/emailtest"
)

// Both TLS modes of both protocols against Dovecot itself: IMAPS and
// IMAP with STARTTLS, and Dovecot's own SMTP submission service with
// STARTTLS and with implicit TLS; a certificate omega does not trust is
// refused.
func TestTLSModesAgainstDovecot(t *testing.T) {
	d := emailtest.StartDovecotWith(t, emailtest.Options{TLS: true, Submission: true}, bot, alice)
	base := Config{Username: bot, Password: emailtest.Password, Mailbox: "INBOX", AllowedAddresses: Addresses{alice},
		PollInterval: time.Second, IdleRefresh: 30 * time.Second, CommandTimeout: 5 * time.Second, BackoffMax: 100 * time.Millisecond}
	modes := []struct {
		name              string
		imapAddr, imapTLS string
		smtpAddr, smtpTLS string
	}{
		{"imaps and submission with starttls", d.IMAPSAddr, TLSImplicit, d.SubmissionAddr, TLSStart},
		{"imap with starttls and submissions", d.IMAPAddr, TLSStart, d.SubmissionsAddr, TLSImplicit},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cfg := base
			cfg.IMAPAddr, cfg.IMAPTLS, cfg.SMTPAddr, cfg.SMTPTLS = m.imapAddr, m.imapTLS, m.smtpAddr, m.smtpTLS
			ch, err := New(cfg, quiet, WithTLSConfig(d.TLSConfig))
			if err != nil {
				t.Fatal(err)
			}
			b := newInbox()
			run(t, ch, b.deliver)
			s := server{d: d}
			id := s.send(t, alice, m.name, "over TLS?")
			if in := b.next(t); in.PlatformID != id {
				t.Fatalf("delivered %+v", in)
			}
			if _, err := ch.SendText(t.Context(), alice, "yes, over "+m.smtpTLS); err != nil {
				t.Fatalf("send: %v\n%s", err, d.Log())
			}
			// The reply is found by its thread, not its place: a reply of the
			// previous mode may still be arriving in the same mailbox.
			var reply *emailtest.Message
			waitFor(t, "the reply in alice's mailbox", func() bool {
				got := d.Messages(t, alice)
				for i := range got {
					if got[i].InReplyTo == id {
						reply = &got[i]
					}
				}
				return reply != nil
			})
			if !strings.Contains(reply.Plain, "yes, over "+m.smtpTLS) {
				t.Errorf("reply %+v", *reply)
			}
		})
	}
	t.Run("untrusted certificate", func(t *testing.T) {
		cfg := base
		cfg.IMAPAddr, cfg.IMAPTLS, cfg.SMTPAddr, cfg.SMTPTLS = d.IMAPSAddr, TLSImplicit, d.SubmissionAddr, TLSStart
		findings := doctor(t.Context(), &cfg, channels.Env{})
		if len(findings) != 2 || findings[0].Level != channels.LevelFail || !strings.Contains(findings[0].Detail, "certificate") ||
			findings[1].Level != channels.LevelFail || !strings.Contains(findings[1].Detail, "certificate") {
			t.Errorf("findings %+v", findings)
		}
	})
}
