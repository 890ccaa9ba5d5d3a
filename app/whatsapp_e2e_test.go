package app_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"go.mau.fi/whatsmeow/types"
)

// The WhatsApp channel in the running pipeline, driven with constructed
// whatsmeow events: an allowlisted number gets a WhatsApp-formatted reply,
// a redelivered message is acknowledged without a second turn, and a
// stranger is offered a pairing code and the owner (the first allowed
// number) is told of it.
func TestWhatsAppEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := richClaude(t)
			vars := baseVars(t, b, claude)
			vars["OMEGA_WHATSAPP_ENABLED"] = "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			cfg := loadConfig(t, vars)
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			auth := &pipeline.Auth{Allowed: map[string][]string{whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{wa}, Auth: auth}, nil)

			const ana, stranger = "4915112345678", "4930111222333"
			deliver := func(id, from, text string) {
				t.Helper()
				// Start runs in the background: until it did, the channel
				// leaves messages unacknowledged, as it must.
				waitFor(t, "the channel to acknowledge "+id, func() bool {
					ok, err := fake.Deliver(whatsapptest.TextFrom(id, from, text))
					if err != nil {
						t.Fatal(err)
					}
					return ok
				})
			}
			turnOf := func(id string) string {
				return intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id})
			}

			deliver("WAMSG1", ana, "format this MDTEST")
			evs := n.waitTurn(t, turnOf("WAMSG1"))
			if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
				t.Fatalf("status %s: %s", got, eventTypes(evs))
			}
			sent := fake.Sent()
			if len(sent) != 2 { // welcome, reply
				t.Fatalf("sent %+v", sent)
			}
			want := "Here is *bold* text and code:\n\n```\nfmt.Println(1 < 2)\n```"
			if reply := sent[1]; reply.Text != want || reply.To != types.NewJID(ana, types.DefaultUserServer) {
				t.Fatalf("reply to %s: %q, want %q", reply.To, reply.Text, want)
			}

			// WhatsApp redelivers after a reconnect: acknowledged, not
			// answered again.
			deliver("WAMSG1", ana, "format this MDTEST")
			if c := countType(n.events(t, turnOf("WAMSG1")), "MessageReceived"); c != 1 {
				t.Fatalf("%d MessageReceived for one message", c)
			}

			deliver("WAMSG2", stranger, "hi, can I use you?")
			evs = n.waitTurn(t, turnOf("WAMSG2"))
			if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusDenied {
				t.Fatalf("stranger's turn status %s", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sent, err := fake.WaitSent(ctx, 4)
			if err != nil {
				t.Fatal(err)
			}
			offer := payload[turn.AccessDenied](t, n, evs).Pairing
			if len(sent) != 4 || offer == nil || sent[2].To.User != ana || !strings.Contains(sent[2].Text, "/pair approve "+offer.Code) ||
				sent[3].To.User != stranger || !strings.Contains(sent[3].Text, "Your pairing code is "+offer.Code) {
				t.Fatalf("sent %+v", sent)
			}
			if countType(evs, "ProviderCalled") != 0 {
				t.Fatal("the provider was called for a stranger")
			}
		})
	}
}

// qrSource is a pairing source the test feeds.
type qrSource struct{ events chan channels.QREvent }

func (s qrSource) QRCodes(context.Context) (<-chan channels.QREvent, error) { return s.events, nil }

// /whatsapp on Telegram: the QR codes arrive as PNG photos in the owner's
// chat, then the "linked" message, and the session is on record.
func TestWhatsAppPairingThroughTelegram(t *testing.T) {
	claude, _ := richClaude(t)
	api := telegramtest.New(t, tgToken)
	cfg := loadConfig(t, telegramVars(baseVars(t, backends()[0], claude), api, "42"))
	tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
	if err != nil {
		t.Fatal(err)
	}
	src := qrSource{events: make(chan channels.QREvent, 4)}
	opts := app.RuntimeOptions{
		Channels: []channels.Channel{tg}, Pairing: src,
		Auth: &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs()}},
	}
	n := startChannelNode(t, cfg, opts, nil)
	qr := n.rt.Pairing
	t.Cleanup(qr.Wait)

	src.events <- channels.QREvent{Code: "2@first", Timeout: time.Minute}
	id := api.PushText(tgUser, tgUser, "/whatsapp")
	evs := n.waitTurn(t, tgTurnID(tgUser, id))
	if countType(evs, "CommandAnswered") != 1 {
		t.Fatalf("/whatsapp was not answered as a command: %s", eventTypes(evs))
	}
	src.events <- channels.QREvent{Code: "2@second", Timeout: 20 * time.Second}
	src.events <- channels.QREvent{Done: true}
	qr.Wait()

	var photos []telegramtest.Call
	for _, c := range api.Sent() {
		if c.Method == "sendPhoto" && c.Accepted() {
			photos = append(photos, c)
		}
	}
	if len(photos) != 2 {
		t.Fatalf("%d QR photos, want 2", len(photos))
	}
	for _, p := range photos {
		if _, err := png.Decode(bytes.NewReader(p.Photo)); err != nil || p.ChatID != "42" {
			t.Fatalf("photo to %s: %v", p.ChatID, err)
		}
	}
	msgs := api.Messages(tgUser)
	if last := msgs[len(msgs)-1].Text; !strings.Contains(last, "WhatsApp is linked") {
		t.Fatalf("last message %q", last)
	}
	stream, err := n.rt.Store.Load(context.Background(), system.WhatsAppPairingStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(stream); got != "WhatsAppPairingStarted WhatsAppQRSent WhatsAppQRSent WhatsAppPaired" {
		t.Fatalf("pairing events: %s", got)
	}
}
