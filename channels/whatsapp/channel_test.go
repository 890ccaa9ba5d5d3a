package whatsapp

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"image/png"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	_ "modernc.org/sqlite"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
)

func TestConfigFromEnv(t *testing.T) {
	var cfg Config
	err := env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{
		"WHATSAPP_ENABLED":         "true",
		"WHATSAPP_ALLOWED_NUMBERS": "+49 151 1234-5678, 0015550001111,+4915112345678",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Enabled || cfg.Groups {
		t.Errorf("Enabled=%v Groups=%v", cfg.Enabled, cfg.Groups)
	}
	if got := strings.Join(cfg.AllowedNumbers, ","); got != "4915112345678,15550001111" {
		t.Errorf("AllowedNumbers = %s", got)
	}
	if !cfg.AllowedNumbers.Contains("4915112345678") || cfg.AllowedNumbers.Contains("123") {
		t.Error("Contains")
	}
	err = env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{"WHATSAPP_ALLOWED_NUMBERS": "12ab"}})
	if err == nil {
		t.Error("short number accepted")
	}
}

func TestSendText(t *testing.T) {
	c, fc, _ := started(t, Config{})
	res, err := c.SendText(t.Context(), alice.String(), "**Done.** See [here](https://x.example).")
	if err != nil {
		t.Fatal(err)
	}
	sent := fc.sentMessages()
	if len(sent) != 1 || res.Chunks != 1 || len(res.PlatformIDs) != 1 || res.PlatformIDs[0] != "OUT1" {
		t.Fatalf("sent %d, result %+v", len(sent), res)
	}
	if sent[0].to != alice {
		t.Errorf("to %s, want %s", sent[0].to, alice)
	}
	if got := sent[0].msg.GetConversation(); got != "*Done.* See here (https://x.example)." {
		t.Errorf("text %q", got)
	}
	// Our own reply echoed back in the self-chat is not new input.
	rec := &recorder{}
	c.deliver = rec.deliver
	own, _ := fc.OwnJIDs()
	fc.handler(msgEvent("OUT1", types.MessageSource{Chat: own, Sender: own, IsFromMe: true}, text("*Done.*")))
	if len(rec.got) != 0 {
		t.Error("own sent message delivered as input")
	}
}

func TestSendTextChunksAndPhoneNumberTarget(t *testing.T) {
	c, fc, _ := started(t, Config{})
	long := strings.Repeat(strings.Repeat("word ", 150)+"\n\n", 10) // ~7500 chars
	res, err := c.SendText(t.Context(), "+49 151 12345678", long)
	if err != nil {
		t.Fatal(err)
	}
	sent := fc.sentMessages()
	if res.Chunks < 2 || len(sent) != res.Chunks {
		t.Fatalf("chunks %d, sent %d", res.Chunks, len(sent))
	}
	for _, s := range sent {
		if s.to != alice || len(s.msg.GetConversation()) > waformat.MaxChunk {
			t.Errorf("chunk to %s of %d bytes", s.to, len(s.msg.GetConversation()))
		}
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name     string
		loggedIn bool
		sendErr  error
		chat     string
		want     error
	}{
		{"not logged in", false, nil, alice.String(), channels.ErrNotConnected},
		{"socket dropped", true, whatsmeow.ErrNotConnected, alice.String(), channels.ErrNotConnected},
		{"bad chat id", true, nil, "@@", channels.ErrRejected},
		{"empty chat id", true, nil, "", channels.ErrRejected},
		{"unknown server", true, whatsmeow.ErrUnknownServer, alice.String(), channels.ErrRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fc, _ := started(t, Config{})
			fc.loggedIn, fc.sendErr = tt.loggedIn, tt.sendErr
			_, err := c.SendText(t.Context(), tt.chat, "hi")
			if !errors.Is(err, tt.want) {
				t.Errorf("SendText err = %v, want %v", err, tt.want)
			}
			if err := c.SendPhoto(t.Context(), tt.chat, channels.Attachment{Data: []byte("img")}, ""); !errors.Is(err, tt.want) {
				t.Errorf("SendPhoto err = %v, want %v", err, tt.want)
			}
		})
	}
	c, _, _ := started(t, Config{})
	if _, err := c.SendText(t.Context(), alice.String(), " \n"); !errors.Is(err, channels.ErrRejected) {
		t.Errorf("empty text: %v", err)
	}
}

func TestSendPhotoAndTyping(t *testing.T) {
	c, fc, _ := started(t, Config{})
	photo := channels.Attachment{Name: "chart.png", MIME: "image/png", Data: []byte("PNGDATA")}
	if err := c.SendPhoto(t.Context(), alice.String(), photo, "**Sales**"); err != nil {
		t.Fatal(err)
	}
	sent := fc.sentMessages()
	if len(fc.uploads) != 1 || string(fc.uploads[0]) != "PNGDATA" || len(sent) != 1 {
		t.Fatalf("uploads %d, sent %d", len(fc.uploads), len(sent))
	}
	img := sent[0].msg.GetImageMessage()
	if img.GetCaption() != "*Sales*" || img.GetMimetype() != "image/png" || img.GetDirectPath() != "/v/x" ||
		string(img.GetMediaKey()) != "key" || img.GetFileLength() != 7 {
		t.Errorf("image message %v", img)
	}

	// A caption WhatsApp would truncate follows as text instead.
	long := strings.Repeat("x", maxCaption+1)
	if err := c.SendPhoto(t.Context(), alice.String(), photo, long); err != nil {
		t.Fatal(err)
	}
	sent = fc.sentMessages()
	if len(sent) != 3 || sent[1].msg.GetImageMessage().GetCaption() != "" || sent[2].msg.GetConversation() != long {
		t.Errorf("long caption: %d messages", len(sent))
	}

	if err := c.SendTyping(t.Context(), group.String()); err != nil {
		t.Fatal(err)
	}
	if len(fc.presences) != 1 || fc.presences[0] != group {
		t.Errorf("presences %v", fc.presences)
	}
}

func TestFormatHintAndName(t *testing.T) {
	c, _, _ := started(t, Config{})
	if c.Name() != "whatsapp" || !strings.Contains(c.FormatHint(), "WhatsApp") {
		t.Error(c.Name(), c.FormatHint())
	}
}

// runStart runs Start in the background with fast backoff.
func runStart(t *testing.T, fc *fakeClient, onLoggedOut func(string)) (c *Channel, stop func() error) {
	t.Helper()
	c = newWithClient(Config{}, fc, nil)
	c.minBackoff, c.maxBackoff = time.Millisecond, 4*time.Millisecond
	c.OnLoggedOut = onLoggedOut
	return runStartChannel(t, c)
}

func runStartChannel(t *testing.T, c *Channel) (*Channel, func() error) {
	t.Helper()
	rec := &recorder{}
	errc := make(chan error, 1)
	go func() { errc <- c.Start(t.Context(), rec.deliver) }()
	return c, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			return err
		}
		return <-errc
	}
}

func waitConnect(t *testing.T, fc *fakeClient) {
	t.Helper()
	select {
	case <-fc.connected:
	case <-time.After(5 * time.Second):
		t.Fatal("Connect not called")
	}
}

func TestStartReconnectsWithBackoff(t *testing.T) {
	fc := newFakeClient()
	fc.connectErrs = []error{errors.New("dial: refused"), errors.New("dial: refused")}
	_, stop := runStart(t, fc, nil)
	for range 3 { // two failures, then success
		waitConnect(t, fc)
	}
	fc.handler(&events.Connected{})
	fc.handler(&events.Disconnected{})
	waitConnect(t, fc) // reconnected after the drop
	fc.handler(&events.StreamReplaced{})
	waitConnect(t, fc)
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

func TestStartLoggedOutCallsHookAndKeepsRunning(t *testing.T) {
	fc := newFakeClient()
	var mu sync.Mutex
	var reasons []string
	hooked := make(chan struct{}, 1)
	c, stop := runStart(t, fc, func(r string) {
		mu.Lock()
		reasons = append(reasons, r)
		mu.Unlock()
		hooked <- struct{}{}
	})
	waitConnect(t, fc)
	fc.handler(&events.LoggedOut{OnConnect: true, Reason: events.ConnectFailureLoggedOut})
	select {
	case <-hooked:
	case <-time.After(5 * time.Second):
		t.Fatal("OnLoggedOut not called")
	}
	mu.Lock()
	if len(reasons) != 1 || !strings.Contains(strings.ToLower(reasons[0]), "logged out") {
		t.Errorf("reasons %q", reasons)
	}
	mu.Unlock()

	// Still running, idle until paired again; then it connects.
	select {
	case <-fc.connected:
		t.Fatal("reconnected a logged-out device")
	case <-time.After(20 * time.Millisecond):
	}
	fc.handler(&events.PairSuccess{ID: fc.pn})
	waitConnect(t, fc)
	if _, err := c.SendText(t.Context(), alice.String(), "back"); err != nil {
		t.Errorf("send after re-pair: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

func TestStartUnpairedWaits(t *testing.T) {
	fc := newFakeClient()
	fc.pn, fc.lid = types.EmptyJID, types.EmptyJID
	_, stop := runStart(t, fc, nil)
	select {
	case <-fc.connected:
		t.Fatal("connected without a paired device")
	case <-time.After(20 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

func TestStartTwice(t *testing.T) {
	fc := newFakeClient()
	c, stop := runStart(t, fc, nil)
	waitConnect(t, fc)
	if err := c.Start(t.Context(), (&recorder{}).deliver); err == nil {
		t.Error("second Start succeeded")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Stopped: it can be started again.
	_, stop = runStartChannel(t, c)
	waitConnect(t, fc)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestQRPNG(t *testing.T) {
	data, err := channels.QRPNG("2@abc,def,ghi")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
		t.Errorf("size %v", b)
	}
}

// fakeSource is a scripted PairingSource.
type fakeSource struct {
	events []channels.QREvent
	code   string
	phone  string
}

func (f *fakeSource) QRCodes(context.Context) (<-chan channels.QREvent, error) {
	ch := make(chan channels.QREvent, len(f.events))
	for _, e := range f.events {
		ch <- e
	}
	close(ch)
	return ch, nil
}

func (f *fakeSource) PairPhone(_ context.Context, phone string) (string, error) {
	f.phone = phone
	return f.code, nil
}

func TestPair(t *testing.T) {
	codes := []channels.QREvent{{Code: "2@first", Timeout: time.Minute}, {Code: "2@second", Timeout: 20 * time.Second}}
	tests := []struct {
		name      string
		events    []channels.QREvent
		phone     string
		wantErr   error
		wantOut   []string
		wantPhone string
	}{
		{"qr success", append(codes, channels.QREvent{Done: true}), "", nil,
			[]string{"Link a device", "▀", "A new code follows in 1m0s", "A new code follows in 20s", "WhatsApp linked"}, ""},
		{"qr timeout", append(codes, channels.QREvent{Done: true, Err: channels.ErrPairTimeout}), "", channels.ErrPairTimeout,
			[]string{"▀"}, ""},
		{"phone code", append(codes, channels.QREvent{Done: true}), "+49 151 12345678", nil,
			[]string{"Your linking code: ABCD-EFGH", "Link with phone number instead", "WhatsApp linked"}, "4915112345678"},
		{"ended without result", codes, "", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{events: tt.events, code: "ABCDEFGH"}
			var out bytes.Buffer
			err := Pair(t.Context(), src, &out, tt.phone)
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && tt.wantOut != nil && err != nil:
				t.Errorf("err = %v", err)
			case tt.wantOut == nil && err == nil:
				t.Error("no error for a session without result")
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if tt.phone != "" && strings.Contains(out.String(), "▀") {
				t.Error("QR printed in phone-code mode")
			}
			if src.phone != tt.wantPhone {
				t.Errorf("PairPhone(%q), want %q", src.phone, tt.wantPhone)
			}
		})
	}
}

func TestChannelQRCodes(t *testing.T) {
	fc := newFakeClient()
	c := newWithClient(Config{}, fc, nil)
	if _, err := c.QRCodes(t.Context()); err == nil {
		t.Fatal("pairing started on a paired device")
	}
	fc.pn, fc.lid = types.EmptyJID, types.EmptyJID
	fc.qr = make(chan whatsmeow.QRChannelItem, 3)
	fc.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: "2@c1", Timeout: time.Minute}
	fc.qr <- whatsmeow.QRChannelSuccess
	close(fc.qr)
	ch, err := c.QRCodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range ch {
		got = append(got, fmt.Sprintf("%s/%v/%v", ev.Code, ev.Done, ev.Err))
	}
	if strings.Join(got, " ") != "2@c1/false/<nil> /true/<nil>" {
		t.Errorf("events %q", got)
	}
	if fc.connects != 1 {
		t.Errorf("connects = %d, want 1", fc.connects)
	}
	if code, err := c.PairPhone(t.Context(), "+1 555 000 2222"); err != nil || fc.pairedPhone != "15550002222" {
		t.Errorf("PairPhone: %q %v, phone %q", code, err, fc.pairedPhone)
	}
}

// A reply with a table, a nested list and a list in a quote reaches the chat in
// WhatsApp's formatting, through the channel's SendText.
func TestSendTextFormatsNestedMarkdown(t *testing.T) {
	c, fc, _ := started(t, Config{})
	md := "## Stock\n\n| Item | Qty |\n|---|---:|\n| Figs | **3** |\n\n1. Order:\n   - *fresh `figs`*\n\n> note **this**:\n> - a\n> - b"
	if _, err := c.SendText(t.Context(), alice.String(), md); err != nil {
		t.Fatal(err)
	}
	want := "*Stock*\n\n*Item — Qty*\n• Figs — *3*\n\n1. Order:\n  • _fresh `figs`_\n\n> note *this*:\n> • a\n> • b"
	sent := fc.sentMessages()
	if len(sent) != 1 {
		t.Fatalf("sent %d messages, want 1", len(sent))
	}
	if got := sent[0].msg.GetConversation(); got != want {
		t.Fatalf("sent %q\nwant %q", got, want)
	}
}

// The doctor opens the channel on omega's database as the server does: a
// fresh device store holds no paired device.
func TestDoctorOnAFreshDeviceStore(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "omega.db")+"?_foreign_keys=1&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	cfg := Config{Enabled: true, AllowedNumbers: PhoneNumbers{"15550001111"}}
	got := doctor(t.Context(), &cfg, channels.Env{DB: db, Dialect: "sqlite", Logger: slog.New(slog.DiscardHandler)})
	want := []channels.Finding{channels.Fail("no device paired", "run `omega whatsapp pair`")}
	if !slices.Equal(got, want) {
		t.Fatalf("findings %+v, want %+v", got, want)
	}
}
