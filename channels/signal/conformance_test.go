package signal

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/signal/signaltest"
)

const (
	bot      = "+4915100000001"
	alice    = "+4915100000002"
	stranger = "+4915100000099"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newDouble(t *testing.T) *signaltest.Server {
	s := signaltest.New(t, bot)
	s.SetKeepAlive(200 * time.Millisecond)
	return s
}

func testConfig(s *signaltest.Server) Config {
	return Config{URL: s.URL, Account: bot, AllowedNumbers: Numbers{alice}, KeepAlive: 200 * time.Millisecond,
		StallGrace: 500 * time.Millisecond, BackoffMax: 200 * time.Millisecond, Catchup: time.Hour}
}

func newChannel(t *testing.T, cfg Config, opts ...Option) *Channel {
	t.Helper()
	ch, err := New(cfg, quiet, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		s := newDouble(t)
		return channeltest.Harness{
			Channel: newChannel(t, testConfig(s)),
			// The daemon keeps the position: events come again on the
			// next connection from the last event id the channel passed.
			Restart: func(t *testing.T) channels.Channel { return newChannel(t, testConfig(s)) },
			ReceiveImage: func(_ *testing.T, data []byte, mime string) {
				s.Push(signaltest.Message{From: alice, Name: "Alice", Attachments: []signaltest.Attachment{{Name: "suite.jpg", MIME: mime, Data: data}}})
			},
			ReceiveGroup: func(_ *testing.T, text string, mention bool) {
				s.Push(signaltest.Message{From: alice, Name: "Alice", Text: text, GroupID: "c3VpdGUtZ3JvdXA=", MentionBot: mention})
			},
			ReceiveStranger: func(_ *testing.T, text string) string {
				s.Push(signaltest.Message{From: stranger, Name: "Stranger", Text: text})
				return stranger
			},
			ChatID:   alice,
			Receive:  func(_ *testing.T, text string) { s.Push(signaltest.Message{From: alice, Name: "Alice", Text: text}) },
			MaxChunk: maxChunk,
			Sent: func(*testing.T) []string {
				var out []string
				for _, m := range s.SentTo(alice) {
					out = append(out, m.Message)
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				switch {
				case errors.Is(class, channels.ErrBlocked):
					s.RefuseNext("UNREGISTERED_FAILURE", 0, 0)
				case errors.Is(class, channels.ErrRejected):
					s.RefuseNext("", 0, -1)
				default:
					return false
				}
				return true
			},
			Photos: func(*testing.T) [][]byte {
				var out [][]byte
				for _, m := range s.SentTo(alice) {
					for _, a := range m.Attachments {
						out = append(out, a.Data)
					}
				}
				return out
			},
		}
	})
}
