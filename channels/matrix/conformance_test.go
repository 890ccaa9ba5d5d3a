package matrix

import (
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/matrix/matrixtest"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
	_ "modernc.org/sqlite"
)

// world is a real Dendrite with the bot and alice in a direct chat.
type world struct {
	d          *matrixtest.Dendrite
	bot, alice *matrixtest.User
	dm         string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	d := matrixtest.Start(t)
	w := &world{d: d, bot: d.Register(t, "omega"), alice: d.Register(t, "alice")}
	w.dm = w.alice.CreateRoom(t, false, w.bot.ID)
	w.bot.Join(t, w.dm)
	return w
}

// The tests' sync timings: short, so a stall is found in seconds.
const (
	syncTimeout = 2 * time.Second
	stallGrace  = time.Second
)

func (w *world) config(homeserver string) Config {
	return Config{Homeserver: homeserver, UserID: w.bot.ID, AccessToken: w.bot.Token, AllowedUsers: UserIDs{w.alice.ID},
		SyncTimeout: syncTimeout, StallGrace: stallGrace, RequestTimeout: 5 * time.Second, BackoffMax: 200 * time.Millisecond}
}

// channel makes a channel that syncs from now on (as one restarted
// after its last batch would).
func (w *world) channel(t *testing.T, homeserver string) (*Channel, *memTokens) {
	t.Helper()
	store := &memTokens{next: map[string]string{w.bot.ID: w.bot.SyncToken(t)}}
	ch, err := New(w.config(homeserver), slog.New(slog.DiscardHandler), store)
	if err != nil {
		t.Fatal(err)
	}
	return ch, store
}

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		w := newWorld(t)
		store := w.sqlTokens(t)
		newChannel := func(t *testing.T) channels.Channel {
			ch, err := New(w.config(w.d.URL), slog.New(slog.DiscardHandler), store)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		group, bob := w.group(t)
		return channeltest.Harness{
			Channel:  newChannel(t),
			ChatID:   w.dm,
			MaxChunk: maxChunk,
			Receive:  func(t *testing.T, text string) { w.alice.SendText(t, w.dm, text) },
			// The sync token in omega's database is the position.
			Restart: newChannel,
			ReceiveImage: func(t *testing.T, data []byte, mime string) {
				w.alice.SendImage(t, w.dm, "suite.jpg", mime, data, "")
			},
			ReceiveGroup: func(t *testing.T, text string, mention bool) {
				if mention {
					w.alice.Mention(t, group, w.bot.ID, text)
					return
				}
				w.alice.SendText(t, group, text)
			},
			// A stranger's invite is refused, but in a room an allowed
			// person shares with the bot a stranger who mentions it
			// reaches the pipeline, which answers with pairing.
			ReceiveStranger: func(t *testing.T, text string) string {
				bob.Mention(t, group, w.bot.ID, text)
				return bob.ID
			},
			Sent: func(t *testing.T) []string {
				msgs := w.settled(t)
				var out []string
				for _, m := range msgs {
					out = append(out, m.Body)
				}
				return out
			},
			Refuse: func(t *testing.T, class error) bool {
				if !errors.Is(class, channels.ErrBlocked) {
					return false // Dendrite takes every well-formed message
				}
				w.bot.Leave(t, w.dm)
				return true
			},
			Visible: func(t *testing.T) []string {
				var out []string
				for _, m := range w.settled(t) {
					out = append(out, m.Body)
				}
				return out
			},
			Photos: func(t *testing.T) [][]byte {
				msgs := w.settled(t)
				var out [][]byte
				for _, m := range msgs {
					if m.MsgType == mxapi.MsgImage {
						out = append(out, w.alice.Download(t, m.URL))
					}
				}
				return out
			},
		}
	})
}

// settled returns the bot's messages in the direct chat as alice sees
// them.
func (w *world) settled(t *testing.T) []matrixtest.Message {
	t.Helper()
	return w.alice.Visible(t, w.dm, w.bot.ID)
}

// sqlTokens keeps the sync token in a throwaway SQLite database, as
// omega's own would, starting from now.
func (w *world) sqlTokens(t *testing.T) *sqlTokens {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "omega.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := openTokens(t.Context(), db, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.save(t.Context(), w.bot.ID, w.bot.SyncToken(t)); err != nil {
		t.Fatal(err)
	}
	return store
}

// group is a room alice shares with the bot and bob, who is on no
// allowlist.
func (w *world) group(t *testing.T) (string, *matrixtest.User) {
	t.Helper()
	bob := w.d.Register(t, "bob")
	room := w.alice.CreateRoom(t, false, w.bot.ID, bob.ID)
	w.bot.Join(t, room)
	bob.Join(t, room)
	return room, bob
}
