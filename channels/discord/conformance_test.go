package discord

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/discord/discordtest"
)

const (
	testToken = "MTAwMDAwMDAwMDAwMDAwMDAx.double.token"
	alice     = "200000000000000042"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(srv *discordtest.Server) Config {
	return Config{Token: testToken, APIURL: srv.URL, GroupMode: GroupModeMention, StallGrace: time.Second,
		BackoffMax: 200 * time.Millisecond, RequestTimeout: 5 * time.Second}
}

func newChannel(t *testing.T, cfg Config) *Channel {
	t.Helper()
	ch, err := New(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		srv := discordtest.New(t, testToken)
		dm := srv.DMChannel(alice)
		return channeltest.Harness{
			Channel: newChannel(t, testConfig(srv)),
			ChatID:  alice,
			Receive: func(t *testing.T, text string) {
				srv.WaitConnected(t)
				srv.PushDM(alice, text)
			},
			Sent: func(*testing.T) []string {
				var out []string
				for _, m := range srv.SentTo(dm) {
					if len(m.Files) == 0 {
						out = append(out, m.Content)
					}
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				switch {
				case errors.Is(class, channels.ErrBlocked):
					srv.FailNext("POST messages", 1, 403, 50007, "Cannot send messages to this user")
				case errors.Is(class, channels.ErrRejected):
					srv.FailNext("POST messages", 1, 400, 50035, "Invalid Form Body")
				default:
					return false
				}
				return true
			},
			MaxChunk: MaxMessageLen,
			Photos: func(*testing.T) [][]byte {
				var out [][]byte
				for _, m := range srv.SentTo(dm) {
					for _, f := range m.Files {
						out = append(out, f.Data)
					}
				}
				return out
			},
		}
	})
}
