package pairing_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/pairing"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/handlers/slash"
)

const (
	qrToken = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZqrcodetes"
	owner   = "4242"
)

var discard = slog.New(slog.DiscardHandler)

// scriptedSource is a pairing source the test feeds event by event.
type scriptedSource struct {
	events chan channels.QREvent
	err    error
}

func (s *scriptedSource) QRCodes(context.Context) (<-chan channels.QREvent, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.events, nil
}

type channelSet map[string]channels.Channel

func (c channelSet) Channel(name string) (channels.Channel, bool) {
	ch, ok := c[name]
	return ch, ok
}

type qrFixture struct {
	qr  *pairing.WhatsAppQR
	src *scriptedSource
	api *telegramtest.Server
	reg *domain.Registry
	st  *sqlite.Store
}

func newQRFixture(t *testing.T, session time.Duration) *qrFixture {
	t.Helper()
	api := telegramtest.New(t, qrToken)
	tg, err := telegram.New(telegram.Config{Token: qrToken, APIURL: api.URL}, discard,
		telegram.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := events.NewRegistry()
	src := &scriptedSource{events: make(chan channels.QREvent, 8)}
	qr, err := pairing.NewWhatsAppQR(pairing.Deps{
		Source: src, Channels: channelSet{telegram.Name: tg}, Store: st,
		Senders: senders.MustNew(st, reg), Logger: discard, Session: session,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(qr.Wait)
	return &qrFixture{qr: qr, src: src, api: api, reg: reg, st: st}
}

// pairingEvents returns the stream's event types, with the failure
// reason appended ("WhatsAppPairingFailed:timeout").
func (f *qrFixture) pairingEvents(t *testing.T) []string {
	t.Helper()
	evs, err := f.st.Load(context.Background(), system.WhatsAppPairingStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		p, err := f.reg.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		name := e.Type
		switch p := p.(type) {
		case system.WhatsAppPairingFailed:
			name += ":" + p.Reason
		case system.WhatsAppQRSent:
			if p.Error != "" {
				name += ":error"
			}
		}
		if e.Metadata.Sender != owner || e.Metadata.CorrelationID == "" {
			t.Errorf("%s metadata %+v", e.Type, e.Metadata)
		}
		out = append(out, name)
	}
	return out
}

func (f *qrFixture) photos() []telegramtest.Call {
	var out []telegramtest.Call
	for _, c := range f.api.Sent() {
		if c.Method == "sendPhoto" {
			out = append(out, c)
		}
	}
	return out
}

func assertPNG(t *testing.T, c telegramtest.Call) {
	t.Helper()
	if _, err := png.Decode(bytes.NewReader(c.Photo)); err != nil {
		t.Errorf("photo to %s is not a PNG: %v", c.ChatID, err)
	}
	if c.ChatID != owner || !strings.Contains(c.Text, "Linked devices") {
		t.Errorf("photo to %s with caption %q", c.ChatID, c.Text)
	}
}

func TestWhatsAppQRPaired(t *testing.T) {
	f := newQRFixture(t, 0)
	f.src.events <- channels.QREvent{Code: "2@first", Timeout: time.Minute}
	if err := f.qr.SendQR(t.Context(), telegram.Name, owner); err != nil {
		t.Fatal(err)
	}
	// SendQR returns once the first code is out; the session goes on.
	if got := f.photos(); len(got) != 1 || !got[0].Accepted() {
		t.Fatalf("after SendQR: %d photos", len(got))
	}
	if err := f.qr.SendQR(t.Context(), telegram.Name, owner); !errors.Is(err, pairing.ErrPairingInProgress) {
		t.Fatalf("second session: %v", err)
	}
	f.src.events <- channels.QREvent{Code: "2@second", Timeout: 20 * time.Second}
	f.src.events <- channels.QREvent{Done: true}
	f.qr.Wait()

	photos := f.photos()
	if len(photos) != 2 {
		t.Fatalf("%d photos, want 2", len(photos))
	}
	for _, p := range photos {
		assertPNG(t, p)
	}
	if bytes.Equal(photos[0].Photo, photos[1].Photo) {
		t.Error("the rotated code was sent as the same image")
	}
	msgs := f.api.Messages(4242)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "WhatsApp is linked") {
		t.Fatalf("messages %+v", msgs)
	}
	want := "WhatsAppPairingStarted WhatsAppQRSent WhatsAppQRSent WhatsAppPaired"
	if got := strings.Join(f.pairingEvents(t), " "); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	// A new session may start once the last one ended.
	f.src.events <- channels.QREvent{Done: true}
	if err := f.qr.SendQR(t.Context(), telegram.Name, owner); err != nil {
		t.Fatalf("session after the end of the last: %v", err)
	}
}

func TestWhatsAppQREndings(t *testing.T) {
	tests := []struct {
		name       string
		events     []channels.QREvent // queued before SendQR
		sourceErr  error
		session    time.Duration
		block      func(*telegramtest.Server)
		wantErr    bool
		wantPhotos int
		wantText   string // in the last message, "" for none
		wantEvents string
	}{
		{
			name:       "timed out by WhatsApp",
			events:     []channels.QREvent{{Code: "2@a", Timeout: time.Minute}, {Done: true, Err: channels.ErrPairTimeout}},
			wantPhotos: 1, wantText: "timed out",
			wantEvents: "WhatsAppPairingStarted WhatsAppQRSent WhatsAppPairingFailed:timeout",
		},
		{
			name:       "session bound reached",
			events:     []channels.QREvent{{Code: "2@a", Timeout: time.Minute}},
			session:    300 * time.Millisecond,
			wantPhotos: 1, wantText: "timed out",
			wantEvents: "WhatsAppPairingStarted WhatsAppQRSent WhatsAppPairingFailed:timeout",
		},
		{
			name:      "source refuses",
			sourceErr: errors.New("whatsapp: a device is already paired"),
			wantErr:   true, wantText: "pairing failed",
			wantEvents: "WhatsAppPairingStarted WhatsAppPairingFailed:error",
		},
		{
			name:    "pairing error before any code",
			events:  []channels.QREvent{{Done: true, Err: errors.New("websocket closed")}},
			wantErr: true, wantText: "pairing failed",
			wantEvents: "WhatsAppPairingStarted WhatsAppPairingFailed:error",
		},
		{
			name:   "owner blocked the bot",
			events: []channels.QREvent{{Code: "2@a", Timeout: time.Minute}, {Code: "2@b"}},
			block:  func(s *telegramtest.Server) { s.FailNext("sendPhoto", 1, 403, 0) },
			// One refused photo, then nothing: no second code, no text.
			wantErr:    true,
			wantEvents: "WhatsAppPairingStarted WhatsAppQRSent:error WhatsAppPairingFailed:undeliverable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newQRFixture(t, tt.session)
			f.src.err = tt.sourceErr
			for _, ev := range tt.events {
				f.src.events <- ev
			}
			if tt.block != nil {
				tt.block(f.api)
			}
			err := f.qr.SendQR(t.Context(), telegram.Name, owner)
			if (err != nil) != tt.wantErr {
				t.Fatalf("SendQR error = %v, want error %v", err, tt.wantErr)
			}
			f.qr.Wait()
			accepted := 0
			for _, p := range f.photos() {
				if p.Accepted() {
					assertPNG(t, p)
					accepted++
				}
			}
			if accepted != tt.wantPhotos {
				t.Errorf("%d photos delivered, want %d", accepted, tt.wantPhotos)
			}
			msgs := f.api.Messages(4242)
			switch {
			case tt.wantText == "" && len(msgs) != 0:
				t.Errorf("unexpected messages %+v", msgs)
			case tt.wantText != "" && (len(msgs) != 1 || !strings.Contains(msgs[0].Text, tt.wantText)):
				t.Errorf("messages %+v, want one with %q", msgs, tt.wantText)
			}
			if got := strings.Join(f.pairingEvents(t), " "); got != tt.wantEvents {
				t.Errorf("events %s, want %s", got, tt.wantEvents)
			}
		})
	}
}

func TestWhatsAppQRCallerGivesUpBeforeFirstCode(t *testing.T) {
	f := newQRFixture(t, 0)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := f.qr.SendQR(ctx, telegram.Name, owner); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled", err)
	}
	if got := strings.Join(f.pairingEvents(t), " "); got != "WhatsAppPairingStarted WhatsAppPairingFailed:canceled" {
		t.Fatalf("events %s", got)
	}
	if len(f.api.Sent()) != 0 {
		t.Fatalf("sent %+v", f.api.Sent())
	}
}

func TestWhatsAppQRUnknownChannel(t *testing.T) {
	f := newQRFixture(t, 0)
	if err := f.qr.SendQR(t.Context(), "signal", owner); err == nil {
		t.Fatal("no error for a channel that is not running")
	}
	if got := f.pairingEvents(t); len(got) != 0 {
		t.Fatalf("events %v", got)
	}
}

func TestWhatsAppQRSpeaksTheSendersLanguage(t *testing.T) {
	f := newQRFixture(t, 0)
	profiles := senders.MustNew(f.st, f.reg)
	md := domain.Metadata{Channel: telegram.Name, Sender: owner}
	if _, err := profiles.Decide(t.Context(), telegram.Name, owner, md, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.SwitchLanguage("Spanish"), nil
	}); err != nil {
		t.Fatal(err)
	}
	f.src.events <- channels.QREvent{Code: "2@a"}
	f.src.events <- channels.QREvent{Done: true}
	if err := f.qr.SendQR(t.Context(), telegram.Name, owner); err != nil {
		t.Fatal(err)
	}
	f.qr.Wait()
	if p := f.photos(); len(p) != 1 || !strings.Contains(p[0].Text, "Escanea") {
		t.Fatalf("photos %+v", p)
	}
	if m := f.api.Messages(4242); len(m) != 1 || !strings.Contains(m[0].Text, "vinculado") {
		t.Fatalf("messages %+v", m)
	}
}

// The /whatsapp command and the WHATSAPP_QR marker reach pairing through
// this interface.
var _ slash.WhatsAppPairing = (*pairing.WhatsAppQR)(nil)
