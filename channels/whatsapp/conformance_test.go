package whatsapp

import (
	"errors"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/channeltest"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
)

func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		fc := newFakeClient()
		clock := &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
		c := NewWithClient(Config{}, fc, nil, WithClock(clock.Now), WithTimer(clock.After))
		return channeltest.Harness{
			Channel: c,
			ChatID:  alice.String(),
			Receive: func(t *testing.T, body string) {
				t.Helper()
				waitConnect(t, fc) // the pipeline is attached once Start runs
				if !fc.handler(msgEvent("C1", direct(alice), text(body))) {
					t.Error("message not acknowledged")
				}
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
