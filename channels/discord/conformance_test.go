package discord

import (
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/discord/discordtest"
	_ "modernc.org/sqlite"
)

const (
	testToken    = "MTAwMDAwMDAwMDAwMDAwMDAx.double.token"
	alice        = "200000000000000042"
	stranger     = "200000000000000099"
	guild        = "300000000000000001"
	guildChannel = "300000000000000002"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func testConfig(srv *discordtest.Server) Config {
	return Config{Token: testToken, APIURL: srv.URL, GroupMode: GroupModeMention, StallGrace: time.Second,
		BackoffMax: 200 * time.Millisecond, RequestTimeout: 5 * time.Second}
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
		srv := discordtest.New(t, testToken)
		dm := srv.DMChannel(alice)
		cur := testCursors(t)
		return channeltest.Harness{
			Channel: newChannel(t, testConfig(srv), withCursors(cur)),
			// The cursors in omega's database are the position: a fresh
			// gateway session replays nothing, the catch-up reads back.
			Restart: func(t *testing.T) channels.Channel { return newChannel(t, testConfig(srv), withCursors(cur)) },
			ReceiveImage: func(t *testing.T, data []byte, mime string) {
				srv.WaitConnected(t)
				srv.Push(discordtest.Message{ChannelID: dm, AuthorID: alice, Author: "alice",
					Attachments: []discordtest.Attachment{{Name: "suite.jpg", ContentType: mime, Data: data}}})
			},
			ReceiveGroup: func(t *testing.T, text string, mention bool) {
				srv.WaitConnected(t)
				srv.PushGuild(guild, guildChannel, alice, text, mention)
			},
			ReceiveStranger: func(t *testing.T, text string) string {
				srv.WaitConnected(t)
				srv.PushDM(stranger, text)
				return stranger
			},
			ChatID: alice,
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

// testCursors keeps the channel's cursors in a throwaway SQLite
// database, as omega's own would.
func testCursors(t *testing.T) *cursors {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "omega.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cur, err := openCursors(t.Context(), db, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	return cur
}
