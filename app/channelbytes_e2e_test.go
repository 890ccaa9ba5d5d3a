package app_test

import (
	"encoding/json"
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
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
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

// tgWorkloadUser is a sender's Telegram user id, ten digits as real ones
// have (the ids appear in every turn's message and metadata).
func tgWorkloadUser(sender int) int64 { return 5_100_000_001 + int64(sender) }

// startTelegramWorkload runs the Telegram channel against the Bot API
// double, senders allowed as users 5100000001, ... in private chats.
func startTelegramWorkload(t *testing.T, vars map[string]string, senders int) (*tgNode, func(*testing.T, int, string) string) {
	api := telegramtest.New(t, tgToken)
	var allowed []string
	for s := range senders {
		allowed = append(allowed, strconv.FormatInt(tgWorkloadUser(s), 10))
	}
	cfg := loadConfig(t, telegramVars(vars, api, strings.Join(allowed, ",")))
	tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(1e9), telegram.WithSleep(shortSleep))
	if err != nil {
		t.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs()}}
	n := startChannelNode(t, cfg, app.RuntimeOptions{Provider: echoProvider{}, Channels: []channels.Channel{tg}, Auth: auth}, nil)
	return n, func(_ *testing.T, sender int, text string) string {
		chat := tgWorkloadUser(sender)
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
	wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
	auth := &pipeline.Auth{Allowed: map[string][]string{whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
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
// waiting for its turn to complete). It returns the log positions before
// and after the messages.
func chatWorkload(t *testing.T, n *tgNode, deliver func(*testing.T, int, string) string, senders, perSender int) (head, end int64) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ends []int64 // the position of each turn's last event
	run := func(s int, text string) bool {
		id := deliver(t, s, text)
		if !n.waitOK(t, id) {
			return false
		}
		evs := n.events(t, id)
		mu.Lock()
		ends = append(ends, evs[len(evs)-1].Position)
		mu.Unlock()
		return true
	}
	for s := range senders {
		wg.Go(func() { run(s, "hello") })
	}
	wg.Wait()
	head = logShows(t, n, ends)
	for s := range senders {
		wg.Go(func() {
			for i := range perSender {
				if !run(s, fmt.Sprintf("message %d from peer-%d: ¿qué tal? 你好 — how is it going?", i, s)) {
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return head, logShows(t, n, ends)
}

// logShows waits until a reader of the whole log sees the events at the
// positions and returns the log's head (the last event read). PostgreSQL
// shows an event to such readers once every transaction that may commit
// before it did, and in that order (transaction, then position), so the
// head is not the highest position; measured before the workload's turns
// show, the measure would miss some, and the workload would be charged
// with the first contacts.
func logShows(t *testing.T, n *tgNode, positions []int64) int64 {
	t.Helper()
	var head int64
	waitFor(t, fmt.Sprintf("the log to show %d turns", len(positions)), func() bool {
		var seen map[int64]bool
		head, seen = readAllPositions(t, n.rt.Store)
		for _, p := range positions {
			if !seen[p] {
				return false
			}
		}
		return true
	})
	return head
}

// readAllPositions reads the whole log: its head and the positions in it.
func readAllPositions(t *testing.T, s eventstore.Store) (head int64, seen map[int64]bool) {
	t.Helper()
	seen = map[int64]bool{}
	for {
		evs, err := s.ReadAll(t.Context(), head, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return head, seen
		}
		for _, e := range evs {
			seen[e.Position] = true
		}
		head = evs[len(evs)-1].Position
	}
}

// waitOK waits for the turn to complete and reports whether it was
// answered.
func (n *tgNode) waitOK(t *testing.T, turnID string) bool {
	evs := n.waitTurn(t, turnID)
	if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
		t.Errorf("turn %s: status %s: %s", turnID, got, eventTypes(evs))
		return false
	}
	return true
}

// typeBytes is what the events of one type after a position stored, as
// storedBytes counts it.
type typeBytes struct{ count, stored int64 }

// storedByType is the stored bytes of the events after position after,
// by event type.
func storedByType(t testing.TB, s eventstore.Store, after int64) map[string]typeBytes {
	t.Helper()
	out := map[string]typeBytes{}
	for head := after; ; {
		evs, err := s.ReadAll(t.Context(), head, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return out
		}
		for _, e := range evs {
			md, err := json.Marshal(e.Metadata)
			if err != nil {
				t.Fatal(err)
			}
			b := out[e.Type]
			b.count++
			b.stored += int64(len(e.Data) + len(md) + len(e.StreamID) + len(e.Type))
			out[e.Type] = b
		}
		head = evs[len(evs)-1].Position
	}
}

// breakdown lists what each type stored per turn, with its count.
func breakdown(byType map[string]typeBytes, turns int64) string {
	var parts []string
	for typ, b := range byType {
		parts = append(parts, fmt.Sprintf("%s %d×%d", typ, b.count, b.stored/turns))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
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
				head, _ := chatWorkload(t, n, deliver, senders, perSender)
				total, _ := storedBytes(t, n.rt.Store, head)
				turns := int64(senders * perSender)
				t.Logf("%s/%s: %d bytes stored per turn over %d turns; per type, count × stored bytes per turn: %s",
					p.name, b.name, total/turns, turns, breakdown(storedByType(t, n.rt.Store, head), turns))
				if perTurn := total / turns; perTurn > maxStoredPerTurn {
					t.Errorf("a turn stores %d bytes, more than %d", perTurn, maxStoredPerTurn)
				}
			})
		}
	}
}
