package email

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/email/emailtest"
)

const (
	bot   = "omega@example.test"
	alice = "alice@example.test"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// server is a real Dovecot, with its own submission service relaying
// through the MTA double (sub) that can refuse.
type server struct {
	d   *emailtest.Dovecot
	sub *emailtest.Submission
}

func startServer(t *testing.T) server {
	t.Helper()
	d := emailtest.StartDovecotWith(t, emailtest.Options{Submission: true}, bot, alice, "stranger@example.test")
	return server{d: d, sub: d.Relay}
}

func (s server) config() Config {
	return Config{
		IMAPAddr: s.d.IMAPAddr, SMTPAddr: s.d.SubmissionAddr, Username: bot, Password: emailtest.Password,
		Mailbox: "INBOX", IMAPTLS: TLSPlain, SMTPTLS: TLSPlain, AllowedAddresses: Addresses{alice},
		PollInterval: time.Second, IdleRefresh: 30 * time.Second, CommandTimeout: 5 * time.Second, BackoffMax: 100 * time.Millisecond,
	}
}

func newChannel(t *testing.T, cfg Config) *Channel {
	t.Helper()
	ch, err := New(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

var msgSeq atomic.Int64

// send delivers a message from alice to the bot through Dovecot's LMTP
// and returns its Message-ID.
func (s server) send(t *testing.T, from, subject, body string, extra ...string) string {
	t.Helper()
	id := fmt.Sprintf("<m%d.%d@example.test>", time.Now().UnixNano(), msgSeq.Add(1))
	s.d.Deliver(t, from, []string{bot}, emailtest.Compose(from, bot, id, subject, body, extra...))
	return id
}

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		s := startServer(t)
		return channeltest.Harness{
			Channel: newChannel(t, s.config()),
			ChatID:  alice,
			Receive: func(t *testing.T, text string) { s.send(t, alice, "suite", text) },
			Sent: func(t *testing.T) []string {
				var out []string
				for _, m := range s.d.Messages(t, alice) {
					out = append(out, m.Plain)
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				switch {
				case errors.Is(class, channels.ErrBlocked):
					s.sub.RefuseNext("RCPT", 550, "no such user")
				case errors.Is(class, channels.ErrRejected):
					s.sub.RefuseNext("DATA", 554, "message refused")
				default:
					return false
				}
				return true
			},
			Photos: func(t *testing.T) [][]byte {
				var out [][]byte
				for _, m := range s.d.Messages(t, alice) {
					for _, f := range m.Files {
						out = append(out, f.Data)
					}
				}
				return out
			},
		}
	})
}
