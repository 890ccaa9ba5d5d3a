package email

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
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
			// The mailbox's seen flags are the position: a message is
			// marked seen only once Deliver recorded it.
			Restart: func(t *testing.T) channels.Channel { return newChannel(t, s.config()) },
			ReceiveImage: func(t *testing.T, data []byte, mime string) {
				s.d.Deliver(t, alice, []string{bot}, withImage(alice, bot, data, mime))
			},
			// No groups on email, and mail from off the allowlist is
			// never delivered (omega does not mail strangers), so no
			// ReceiveGroup or ReceiveStranger.
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

// withImage is a message with a text part and an attached image, as a
// mail client writes one.
func withImage(from, to string, data []byte, mime string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: a picture\r\nMessage-ID: <img%d@example.test>\r\n", from, to, msgSeq.Add(1))
	b.WriteString("Date: Fri, 27 Nov 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=suite\r\n\r\n")
	b.WriteString("--suite\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nsee the picture\r\n")
	b.WriteString("--suite\r\nContent-Type: " + mime + "\r\nContent-Disposition: attachment; filename=\"suite.jpg\"\r\n")
	b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n" + base64.StdEncoding.EncodeToString(data) + "\r\n--suite--\r\n")
	return []byte(b.String())
}
