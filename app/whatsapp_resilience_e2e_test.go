package app_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// WhatsApp in the running pipeline, with the owner on Telegram, through
// the faults whatsmeow reports: the server goes away mid-conversation,
// keepalive pings go unanswered, the session is replaced, the device is
// logged out. The channel is down or stalled while it cannot receive
// (what /readyz and the web UI read), reconnects with the default waits
// once the server answers, is recorded on channel-whatsapp, the owner is
// alerted on Telegram after OMEGA_CHANNEL_DOWN_ALERT, and a message
// WhatsApp redelivers after the reconnect is answered once.
//
// omega serve cannot run WhatsApp against a double: whatsmeow dials
// WhatsApp's servers with a paired device, so this drives the channel
// in-process through whatsapptest with SimulateServer.
func TestWhatsAppResilience(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := richClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42")
			vars["OMEGA_WHATSAPP_ENABLED"] = "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			vars["OMEGA_CHANNEL_DOWN_ALERT"] = "1s"
			cfg := loadConfig(t, vars)
			tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
			if err != nil {
				t.Fatal(err)
			}
			fake := whatsapptest.New()
			fake.SimulateServer()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet) // default reconnect waits
			auth := &pipeline.Auth{Allowed: map[string][]string{
				telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs(),
				whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers,
			}}
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{tg, wa}, Auth: auth}, nil)
			w := waHarness{t: t, n: n, fake: fake, api: api}

			w.deliver("WA1", "first question")
			w.answered("first question")

			// The server goes away mid-conversation.
			down := time.Now()
			if err := fake.ServerDown(); err != nil {
				t.Fatal(err)
			}
			w.state("down")
			// A reply on its way when the connection dropped waits for it.
			held := make(chan error, 1)
			go func() {
				_, err := wa.SendText(context.Background(), waAna, "reply held while down")
				held <- err
			}()
			w.ownerTold("whatsapp has not received messages", 1)
			time.Sleep(10 * time.Second) // the reconnect waits reach their 5 s cap
			back := time.Now()
			fake.ServerUp()
			w.state("")
			// The bar: connected again within 5 s of the server answering
			// (1 s for the timer to fire on a loaded machine).
			again := firstConnectSince(t, fake, back)
			t.Logf("connected again %v after the server answered (cap 5s)", again)
			if again > 6*time.Second {
				t.Fatalf("connected again %v after the server answered, want within 5 s", again)
			}
			tries := fake.Connects()
			for i := 1; i < len(tries); i++ {
				if tries[i].After(down) && tries[i].Sub(tries[i-1]) > 6*time.Second {
					t.Fatalf("%v between connect attempts during the outage, want at most 5 s", tries[i].Sub(tries[i-1]))
				}
			}
			w.ownerTold("whatsapp is receiving messages again", 1)
			if err := <-held; err != nil {
				t.Fatalf("the reply held while down: %v", err)
			}
			// WhatsApp redelivers what was not acknowledged, under its id.
			w.deliver("WA1", "first question")
			w.deliver("WA2", "second question")
			w.answered("second question")

			// Pings go unanswered: stalled, then dialled again.
			before := len(fake.Connects())
			w.emit(&events.KeepAliveTimeout{ErrorCount: 1, LastSuccess: time.Now().Add(-30 * time.Second)})
			w.state("stalled")
			w.emit(&events.KeepAliveTimeout{ErrorCount: 2, LastSuccess: time.Now().Add(-60 * time.Second)})
			w.state("")
			if len(fake.Connects()) == before {
				t.Fatal("a stalled socket was not dialled again")
			}

			w.emit(&events.StreamReplaced{})
			w.state("")
			w.deliver("WA3", "third question")
			w.answered("third question")

			// Logged out: down until paired again, and the owner is told.
			w.emit(&events.LoggedOut{Reason: events.ConnectFailureLoggedOut})
			w.state("down")
			w.ownerTold("whatsapp has not received messages", 2)

			time.Sleep(time.Second) // room for a late duplicate
			for _, q := range []string{"first question", "second question", "third question", "reply held while down"} {
				if got := w.replies(q); got != 1 {
					t.Errorf("%q answered %d times, want once", q, got)
				}
			}
			if c := countType(n.events(t, waTurn("WA1")), "MessageReceived"); c != 1 {
				t.Errorf("%d MessageReceived for WA1, delivered twice", c)
			}
			w.recorded("ChannelDown", "ChannelRecovered", "ChannelStalled", "OwnerAlerted")
		})
	}
}

func waTurn(id string) string {
	return intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id})
}

// waHarness drives the WhatsApp double and reads what the node shows.
type waHarness struct {
	t    *testing.T
	n    *tgNode
	fake *whatsapptest.Client
	api  *telegramtest.Server
}

const waAna = "4915112345678"

func (w waHarness) emit(evt any) {
	w.t.Helper()
	if _, err := w.fake.Deliver(evt); err != nil {
		w.t.Fatal(err)
	}
}

// deliver hands a message to the channel until it acknowledges it, as
// WhatsApp redelivers an unacknowledged one.
func (w waHarness) deliver(id, text string) {
	w.t.Helper()
	waitFor(w.t, "the channel to acknowledge "+id, func() bool {
		ok, err := w.fake.Deliver(whatsapptest.TextFrom(id, waAna, text))
		if err != nil {
			w.t.Fatal(err)
		}
		return ok
	})
}

func (w waHarness) replies(text string) int {
	n := 0
	for _, s := range w.fake.Sent() {
		if s.To.User == waAna && strings.Contains(s.Text, text) {
			n++
		}
	}
	return n
}

func (w waHarness) answered(text string) {
	w.t.Helper()
	waitFor(w.t, "the answer to "+text, func() bool { return w.replies(text) > 0 })
}

// state waits for the channel's state as /readyz and the web UI read it
// ("" for receiving).
func (w waHarness) state(want string) {
	w.t.Helper()
	waitFor(w.t, "whatsapp "+want, func() bool {
		unhealthy := w.n.rt.UnhealthyChannels()
		if want == "" {
			return len(unhealthy) == 0
		}
		return slices.Equal(unhealthy, []string{"whatsapp: " + want})
	})
	ui := channels.HealthUp
	if want != "" {
		ui = want
	}
	for _, s := range w.n.rt.ChannelStates() {
		if s.Name == whatsapp.Name && s.State != ui {
			w.t.Fatalf("web UI state %+v, want %s", s, ui)
		}
	}
}

// ownerTold waits for the nth message to the owner on Telegram with text.
func (w waHarness) ownerTold(text string, nth int) {
	w.t.Helper()
	waitFor(w.t, "owner message "+text, func() bool {
		n := 0
		for _, m := range w.api.Messages(tgUser) {
			if strings.Contains(m.Text, text) {
				n++
			}
		}
		return n >= nth
	})
}

func (w waHarness) recorded(types ...string) {
	w.t.Helper()
	evs, err := w.n.rt.Store.Load(context.Background(), system.ChannelStream(whatsapp.Name), 1)
	if err != nil {
		w.t.Fatal(err)
	}
	got := eventTypes(evs)
	for _, typ := range types {
		if !strings.Contains(got, typ) {
			w.t.Errorf("channel-whatsapp lacks %s: %s", typ, got)
		}
	}
}

func firstConnectSince(t *testing.T, fake *whatsapptest.Client, since time.Time) time.Duration {
	t.Helper()
	for _, at := range fake.Connects() {
		if !at.Before(since) {
			return at.Sub(since)
		}
	}
	t.Fatal("no connect after the server came back")
	return 0
}
