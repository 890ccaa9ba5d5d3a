package app_test

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/intake"
	"github.com/omega-gateway/omega/pipeline"
)

// chatPlatform is a messaging platform double the byte workload runs
// through: it starts a node on vars and delivers a sender's text,
// returning the turn it becomes.
type chatPlatform struct {
	name  string
	start func(t *testing.T, vars map[string]string, senders int) (n *tgNode, deliver func(t *testing.T, sender int, text string) string)
}

func chatPlatforms() []chatPlatform {
	return []chatPlatform{{"telegram", startTelegramWorkload}, {"whatsapp", startWhatsAppWorkload}}
}

// startTelegramWorkload runs the Telegram channel against the Bot API
// double, senders allowed as users 1001, 1002, ... in private chats.
func startTelegramWorkload(t *testing.T, vars map[string]string, senders int) (*tgNode, func(*testing.T, int, string) string) {
	api := telegramtest.New(t, tgToken)
	var allowed []string
	for s := range senders {
		allowed = append(allowed, strconv.Itoa(1001+s))
	}
	cfg := loadConfig(t, telegramVars(vars, api, strings.Join(allowed, ",")))
	tg, err := telegram.New(cfg.Telegram, quiet, telegram.WithPollTimeout(1e9), telegram.WithSleep(shortSleep))
	if err != nil {
		t.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: cfg.Telegram.AllowedUserIDs()}}
	n := startChannelNode(t, cfg, app.RuntimeOptions{Provider: echoProvider{}, Channels: []channels.Channel{tg}, Auth: auth}, nil)
	return n, func(_ *testing.T, sender int, text string) string {
		chat := int64(1001 + sender)
		return tgTurnID(chat, api.PushText(chat, chat, text))
	}
}

// startWhatsAppWorkload runs the WhatsApp channel against the client
// double, senders allowed as numbers +49 151 0000 0001, ...
func startWhatsAppWorkload(t *testing.T, vars map[string]string, senders int) (*tgNode, func(*testing.T, int, string) string) {
	number := func(s int) string { return fmt.Sprintf("4915100000%03d", s+1) }
	var allowed []string
	for s := range senders {
		allowed = append(allowed, "+"+number(s))
	}
	vars["OMEGA_WHATSAPP_ENABLED"] = "true"
	vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = strings.Join(allowed, ",")
	cfg := loadConfig(t, vars)
	fake := whatsapptest.New()
	wa := whatsapp.NewWithClient(cfg.WhatsApp, fake, quiet)
	auth := &pipeline.Auth{Allowed: map[string][]string{whatsapp.Name: cfg.WhatsApp.AllowedNumbers}}
	n := startChannelNode(t, cfg, app.RuntimeOptions{Provider: echoProvider{}, Channels: []channels.Channel{wa}, Auth: auth}, nil)
	var mu sync.Mutex
	next := 0
	return n, func(t *testing.T, sender int, text string) string {
		mu.Lock()
		next++
		id := fmt.Sprintf("WABYTES%04d", next)
		mu.Unlock()
		// Until the channel started it leaves messages unacknowledged.
		waitFor(t, "the channel to acknowledge "+id, func() bool {
			ok, err := fake.Deliver(whatsapptest.TextFrom(id, number(sender), text))
			if err != nil {
				t.Fatal(err)
			}
			return ok
		})
		return intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id})
	}
}

// chatWorkload is sendWorkload through a platform double: each sender's
// first contact, then perSender messages each (senders at once, each
// waiting for its turn to complete), returning the log position before
// the messages.
func chatWorkload(t *testing.T, n *tgNode, deliver func(*testing.T, int, string) string, senders, perSender int) int64 {
	t.Helper()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() { n.waitOK(t, deliver(t, s, "hello")) })
	}
	wg.Wait()
	_, head := storedBytes(t, n.rt.Store, 0)
	for s := range senders {
		wg.Go(func() {
			for i := range perSender {
				text := fmt.Sprintf("message %d from peer-%d: ¿qué tal? 你好 — how is it going?", i, s)
				if !n.waitOK(t, deliver(t, s, text)) {
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return head
}

// waitOK waits for the turn to complete and reports whether it was
// answered.
func (n *tgNode) waitOK(t *testing.T, turnID string) bool {
	evs := n.waitTurn(t, turnID)
	if got := payload[domain.TurnCompleted](t, n, evs).Status; got != domain.StatusOK {
		t.Errorf("turn %s: status %s: %s", turnID, got, eventTypes(evs))
		return false
	}
	return true
}

// storedByType is the stored bytes of the events after position after,
// by event type, as storedBytes counts them.
func storedByType(t testing.TB, s eventstore.Store, after int64) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, typ := range eventTypesAfter(t, s, after) {
		_, data, _ := storedBytesOf(t, s, after, typ)
		out[typ] = data
	}
	return out
}

func eventTypesAfter(t testing.TB, s eventstore.Store, after int64) []string {
	t.Helper()
	seen := map[string]bool{}
	var types []string
	for head := after; ; {
		evs, err := s.ReadAll(t.Context(), head, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			sort.Strings(types)
			return types
		}
		for _, e := range evs {
			if !seen[e.Type] {
				seen[e.Type] = true
				types = append(types, e.Type)
			}
		}
		head = evs[len(evs)-1].Position
	}
}

// An ordinary Telegram or WhatsApp turn, which also watches the
// workspace for images the provider makes, stores at most 3 KB over the
// peer workload (5 senders x 20 messages), as an HTTP turn does.
func TestChatTurnStoredBytes(t *testing.T) {
	const senders, perSender = 5, 20
	for _, p := range chatPlatforms() {
		for _, b := range backends() {
			t.Run(p.name+"/"+b.name, func(t *testing.T) {
				claude, _ := fakeClaude(t)
				vars := baseVars(t, b, claude)
				vars["OMEGA_TIMEZONE"] = "UTC"
				n, deliver := p.start(t, vars, senders)
				head := chatWorkload(t, n, deliver, senders, perSender)
				total, _ := storedBytes(t, n.rt.Store, head)
				turns := int64(senders * perSender)
				var parts []string
				for typ, data := range storedByType(t, n.rt.Store, head) {
					parts = append(parts, fmt.Sprintf("%s %d", typ, data/turns))
				}
				sort.Strings(parts)
				t.Logf("%s/%s: %d bytes stored per turn over %d turns; data per turn: %s", p.name, b.name, total/turns, turns, strings.Join(parts, ", "))
				if perTurn := total / turns; perTurn > maxStoredPerTurn {
					t.Errorf("a turn stores %d bytes, more than %d", perTurn, maxStoredPerTurn)
				}
			})
		}
	}
}
