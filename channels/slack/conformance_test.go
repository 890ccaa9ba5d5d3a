package slack

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/slack/slacktest"
)

const (
	alice    = "UALICE01"
	stranger = "USTRANGE1"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(s *slacktest.Server) Config {
	return Config{BotToken: slacktest.BotToken, AppToken: slacktest.AppToken, APIURL: s.APIURL(),
		AllowedUsers: UserIDs{alice}, KeepAlive: 500 * time.Millisecond, StallGrace: 500 * time.Millisecond, BackoffMax: 200 * time.Millisecond}
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
		s := slacktest.New(t)
		dm := slacktest.DMChannel(alice)
		return channeltest.Harness{
			Channel: newChannel(t, testConfig(s)),
			// Slack keeps the position: an envelope not acknowledged is
			// sent again on the next connection.
			Restart: func(t *testing.T) channels.Channel { return newChannel(t, testConfig(s)) },
			ReceiveImage: func(_ *testing.T, data []byte, mime string) {
				s.PushFile(alice, dm, "im", "", "suite.jpg", mime, data)
			},
			ReceiveGroup: func(_ *testing.T, text string, mention bool) {
				if mention {
					text = "<@" + slacktest.BotUserID + "> " + text
				}
				s.PushChannel(alice, "CGENERAL1", text, "")
			},
			ReceiveStranger: func(_ *testing.T, text string) string {
				s.PushDM(stranger, text)
				return stranger
			},
			ChatID:   dm,
			Receive:  func(_ *testing.T, text string) { s.PushDM(alice, text) },
			MaxChunk: maxChunk,
			Sent: func(*testing.T) []string {
				var out []string
				for _, m := range s.Messages(dm) {
					out = append(out, m.Text)
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				switch {
				case errors.Is(class, channels.ErrBlocked):
					s.RefuseNext("chat.postMessage", "channel_not_found")
				case errors.Is(class, channels.ErrRejected):
					s.RefuseNext("chat.postMessage", "msg_too_long")
				default:
					return false
				}
				return true
			},
			Visible: func(*testing.T) []string {
				var out []string
				for _, m := range s.Messages(dm) {
					out = append(out, m.Text)
				}
				return out
			},
			Photos: func(*testing.T) [][]byte {
				var out [][]byte
				for _, u := range s.Uploads() {
					out = append(out, u.Data)
				}
				return out
			},
		}
	})
}
