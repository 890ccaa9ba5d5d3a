package matrix

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/matrix/matrixtest"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
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
		ch, _ := w.channel(t, w.d.URL)
		return channeltest.Harness{
			Channel:  ch,
			ChatID:   w.dm,
			MaxChunk: maxChunk,
			Receive:  func(t *testing.T, text string) { w.alice.SendText(t, w.dm, text) },
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
