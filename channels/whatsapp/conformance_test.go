package whatsapp

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
)

var stranger = types.NewJID("4917099999999", types.DefaultUserServer)

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		fc := newFakeClient()
		clock := &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
		newChannel := func(*testing.T) channels.Channel {
			return NewWithClient(Config{Groups: true}, fc, nil, WithClock(clock.Now), WithTimer(clock.After))
		}
		var seq atomic.Int64
		push := func(t *testing.T, src types.MessageSource, m *waE2E.Message) {
			t.Helper()
			fc.waitStarted(t, 1) // the pipeline is attached once Start runs
			fc.push(msgEvent(fmt.Sprintf("C%d", seq.Add(1)), src, m))
		}
		return channeltest.Harness{
			Channel: newChannel(t),
			ChatID:  alice.String(),
			Receive: func(t *testing.T, body string) { push(t, direct(alice), text(body)) },
			// The same device store (fc) after a restart: WhatsApp sends
			// what was not acknowledged again.
			Restart: newChannel,
			ReceiveImage: func(t *testing.T, data []byte, mime string) {
				fc.mu.Lock()
				fc.download = data
				fc.mu.Unlock()
				push(t, direct(alice), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Mimetype: proto.String(mime)}})
			},
			ReceiveGroup: func(t *testing.T, body string, mention bool) {
				m := &waE2E.ExtendedTextMessage{Text: proto.String(body)}
				if mention {
					m.ContextInfo = &waE2E.ContextInfo{MentionedJID: []string{fc.pn.String()}}
				}
				push(t, inGroup(alice), &waE2E.Message{ExtendedTextMessage: m})
			},
			ReceiveStranger: func(t *testing.T, body string) string {
				push(t, direct(stranger), text(body))
				return stranger.User
			},
			Sent: func(*testing.T) []string {
				var out []string
				for _, s := range fc.sentMessages() {
					if s.msg.GetImageMessage() == nil {
						out = append(out, s.msg.GetConversation())
					}
				}
				return out
			},
			Refuse: func(_ *testing.T, class error) bool {
				fc.mu.Lock()
				defer fc.mu.Unlock()
				switch {
				case errors.Is(class, channels.ErrRejected):
					fc.sendErr = whatsmeow.ErrUnknownServer
				default:
					return false // WhatsApp does not tell a sender it is blocked
				}
				return true
			},
			MaxChunk: waformat.MaxChunk,
			Visible:  func(*testing.T) []string { return fc.visible() },
			Advance:  clock.advance,
			Photos: func(*testing.T) [][]byte {
				fc.mu.Lock()
				defer fc.mu.Unlock()
				var out [][]byte
				for _, s := range fc.sent {
					if img := s.msg.GetImageMessage(); img != nil {
						out = append(out, fc.uploads[len(out)])
					}
				}
				return out
			},
		}
	})
}
