package telegram

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/telegram/tgtext"
)

func TestChannelConformance(t *testing.T) {
	const chat, person, group, stranger = 4242, 4242, -100777, 9999
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		srv := telegramtest.New(t, testToken)
		sl := &sleeps{}
		newChannel := func(t *testing.T) channels.Channel {
			ch, err := New(Config{Token: testToken, APIURL: srv.URL, GroupMode: GroupModeMention},
				slog.New(slog.NewTextHandler(io.Discard, nil)), WithSleep(sl.sleep), WithClock(sl.clock), WithTimer(sl.after),
				WithPollTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		photos := 0
		return channeltest.Harness{
			Channel: newChannel(t),
			// Telegram keeps the position: updates not confirmed by the
			// next getUpdates offset come again.
			Restart: newChannel,
			ReceiveImage: func(_ *testing.T, data []byte, _ string) {
				photos++
				id := fmt.Sprintf("suite-photo-%d", photos)
				srv.AddFile(id, data)
				msg := telegramtest.Message(chat, person, "")
				msg["photo"] = []map[string]any{{"file_id": id, "file_unique_id": id, "width": 640, "height": 480}}
				srv.PushUpdate(map[string]any{"message": msg})
			},
			ReceiveGroup: func(_ *testing.T, text string, mention bool) {
				if mention {
					text = "@" + telegramtest.BotUsername + " " + text
				}
				srv.PushText(group, person, text)
			},
			ReceiveStranger: func(_ *testing.T, text string) string {
				srv.PushText(stranger, stranger, text)
				return strconv.Itoa(stranger)
			},
			ChatID:  "4242",
			Receive: func(_ *testing.T, text string) { srv.PushText(chat, person, text) },
			Sent: func(*testing.T) []string {
				var out []string
				for _, c := range srv.Messages(chat) {
					out = append(out, c.Text)
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				switch {
				case errors.Is(class, channels.ErrBlocked):
					srv.FailNextWith("sendMessage", 1, 403, "Forbidden: bot was blocked by the user")
				case errors.Is(class, channels.ErrRejected):
					srv.FailNextWith("sendMessage", 1, 400, "Bad Request: chat not found")
				default:
					return false
				}
				return true
			},
			MaxChunk: tgtext.MaxMessageLen,
			Visible:  func(*testing.T) []string { return visibleTexts(srv, chat) },
			Advance:  sl.advance,
			Photos: func(*testing.T) [][]byte {
				var out [][]byte
				for _, c := range srv.Sent() {
					if c.Method == "sendPhoto" && c.Accepted() {
						out = append(out, c.Photo)
					}
				}
				return out
			},
		}
	})
}
