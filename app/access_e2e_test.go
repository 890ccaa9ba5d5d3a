package app_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/commander"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain"
	accessdom "github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/access"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/senders"
)

const tgOwner int64 = 42

// pairingCase is one node running Telegram against the Bot API double,
// with 42 as the owner (the only allowlisted user).
type pairingCase struct {
	t    *testing.T
	n    *tgNode
	api  *telegramtest.Server
	vars map[string]string
}

// rerunIdentical re-runs a recorded turn (as `omega rerun` does) and
// expects the same events: pairings and links are part of the state a
// turn starts from.
func (c pairingCase) rerunIdentical(evs []domain.Event) {
	c.t.Helper()
	res, err := rerun.Run(context.Background(), c.n.rt.Store, c.n.rt.Registry, loadConfig(c.t, c.vars), evs[0].StreamID[len("turn-"):],
		rerun.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	if !res.Identical {
		c.t.Fatalf("re-ran differently:\n%s", strings.Join(res.Diff, "\n"))
	}
}

// say sends text from a private chat and returns the completed turn.
func (c pairingCase) say(from int64, text string) []domain.Event {
	c.t.Helper()
	id := c.api.PushText(from, from, text)
	return c.n.waitTurn(c.t, tgTurnID(from, id))
}

// denied checks that a turn was denied with a pairing offer and no
// provider call, and returns the offer.
func (c pairingCase) denied(evs []domain.Event) accessdom.PairingOffer {
	c.t.Helper()
	if got := payload[turn.TurnCompleted](c.t, c.n, evs).Status; got != turn.StatusDenied {
		c.t.Fatalf("status %s: %s", got, eventTypes(evs))
	}
	if n := countType(evs, "ProviderCalled"); n != 0 {
		c.t.Fatalf("the provider was called for an unknown sender")
	}
	d := payload[turn.AccessDenied](c.t, c.n, evs)
	if d.Pairing == nil {
		c.t.Fatalf("denied without a pairing offer: %+v", d)
	}
	return *d.Pairing
}

// answered checks that a turn was answered by the provider.
func (c pairingCase) answered(evs []domain.Event, reply string) {
	c.t.Helper()
	if got := payload[turn.TurnCompleted](c.t, c.n, evs).Status; got != turn.StatusOK {
		c.t.Fatalf("status %s: %s", got, eventTypes(evs))
	}
	if got := payload[turn.ReplySent](c.t, c.n, evs).Text; got != reply {
		c.t.Fatalf("reply %q, want %q", got, reply)
	}
}

// command sends an owner command and returns its answer.
func (c pairingCase) command(from int64, text string) string {
	c.t.Helper()
	evs := c.say(from, text)
	return payload[turn.CommandAnswered](c.t, c.n, evs).Reply
}

// lastText is the last message the double accepted for chat.
func (c pairingCase) lastText(chat int64) string {
	c.t.Helper()
	msgs := c.api.Messages(chat)
	if len(msgs) == 0 {
		c.t.Fatalf("no message to %d", chat)
	}
	return msgs[len(msgs)-1].Text
}

// waitText waits until chat received a message containing want.
func (c pairingCase) waitText(chat int64, want string) {
	c.t.Helper()
	waitFor(c.t, "a message to "+want, func() bool {
		for _, m := range c.api.Messages(chat) {
			if strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
}

func (c pairingCase) pairingEvents(typ string) []domain.Payload {
	c.t.Helper()
	evs, err := c.n.rt.Store.Load(context.Background(), accessdom.SenderPairingStream, 1)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []domain.Payload
	for _, e := range evs {
		if e.Type == typ {
			p, err := c.n.rt.Registry.Decode(e)
			if err != nil {
				c.t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// Sender pairing end to end over Telegram, on both backends: an unknown
// sender gets a code and no provider call, the owner is told, approves in
// chat or on the command line, and the sender is told and answered; a
// rejected or expired code stays denied; the rate limit holds; a paired
// sender is no owner; a revoked one is denied again.
func TestSenderPairingEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, promptLog := richClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42")
			vars["OMEGA_PAIRING_MAX_CODES"] = "2"
			c := pairingCase{t: t, n: startTelegramNode(t, vars), api: api, vars: vars}

			t.Run("approved in chat", func(t *testing.T) { pairApprovedInChat(c.with(t), promptLog) })
			t.Run("rejected stays denied", func(t *testing.T) { pairRejected(c.with(t)) })
			t.Run("expired stays denied", func(t *testing.T) { pairExpired(c.with(t)) })
			t.Run("rate limited", func(t *testing.T) { pairRateLimited(c.with(t)) })
			t.Run("approved on the command line, then revoked", func(t *testing.T) { pairOnCommandLine(c.with(t)) })
		})
	}
}

func (c pairingCase) with(t *testing.T) pairingCase { c.t = t; return c }

func pairApprovedInChat(c pairingCase, promptLog string) {
	const ana int64 = 99
	before := promptCount(c.t, promptLog)
	first := c.say(ana, "hello, who are you")
	offer := c.denied(first)
	if len(offer.Code) != accessdom.PairingCodeLength || !offer.Fresh {
		c.t.Fatalf("offer %+v", offer)
	}
	want := i18n.AccessText(i18n.English, i18n.AccessPairingCode, offer.Code, i18n.PairingExpiry(offer.ExpiresAt, time.Local))
	if got := c.lastText(ana); got != want {
		c.t.Fatalf("ana got %q, want %q", got, want)
	}
	// The owner is told, with the code and the command to approve it.
	c.waitText(tgOwner, "/pair approve "+offer.Code)

	// Writing again while the code is valid gives the same code, and the
	// owner is not told twice.
	again := c.denied(c.say(ana, "hello??"))
	if again.Code != offer.Code || again.Fresh {
		c.t.Fatalf("second offer %+v, first %+v", again, offer)
	}
	if n := len(c.pairingEvents("PairingOwnerNotified")); n != 1 {
		c.t.Fatalf("%d owner notices", n)
	}
	if got := promptCount(c.t, promptLog); got != before {
		c.t.Fatalf("the provider saw %d prompts for an unknown sender", got-before)
	}

	// A stranger cannot approve; the owner can, with any case and dashes.
	if self := c.denied(c.say(ana, "/pair approve "+offer.Code)); self.Code != offer.Code {
		c.t.Fatalf("a stranger approving their own code: %+v", self)
	}
	code := strings.ToLower(offer.Code[:3] + "-" + offer.Code[3:])
	if got := c.command(tgOwner, "/pair approve "+code); got != i18n.AccessText(i18n.English, i18n.AccessApproved, "telegram:99", offer.Code) {
		c.t.Fatalf("approval answered %q", got)
	}
	c.waitText(ana, i18n.AccessText(i18n.English, i18n.AccessApprovedSender))
	answered := c.say(ana, "now answer me")
	c.answered(answered, "echo: now answer me")
	c.rerunIdentical(first)
	c.rerunIdentical(answered)
	if got := promptCount(c.t, promptLog); got != before+1 {
		c.t.Fatalf("%d provider calls after the approval, want 1", got-before)
	}

	// An approved sender is not the owner.
	if got := c.command(ana, "/pair list"); got != i18n.AccessText(i18n.English, i18n.AccessOwnerOnly) {
		c.t.Fatalf("a paired sender's /pair list: %q", got)
	}
	if got := c.command(tgOwner, "/pair approve "+offer.Code); got != i18n.AccessText(i18n.English, i18n.AccessCodeDecided, offer.Code) {
		c.t.Fatalf("approving twice: %q", got)
	}
}

func promptCount(t *testing.T, log string) int {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "<<<\n")
}

func pairRejected(c pairingCase) {
	const bob int64 = 98
	offer := c.denied(c.say(bob, "let me in"))
	if got := c.command(tgOwner, "/pair reject "+offer.Code); got != i18n.AccessText(i18n.English, i18n.AccessRejected, "telegram:98", offer.Code) {
		c.t.Fatalf("rejection answered %q", got)
	}
	next := c.denied(c.say(bob, "please"))
	if next.Code == offer.Code {
		c.t.Fatalf("a rejected code was offered again")
	}
	if got := c.command(tgOwner, "/pair approve "+offer.Code); got != i18n.AccessText(i18n.English, i18n.AccessCodeDecided, offer.Code) {
		c.t.Fatalf("approving a rejected code: %q", got)
	}
	c.denied(c.say(bob, "still nothing?"))
}

func pairExpired(c pairingCase) {
	const cid int64 = 97
	offer := c.denied(c.say(cid, "hi"))
	// The code's validity is in its record: one issued two hours ago with
	// the default TTL has expired.
	ctx := context.Background()
	old := accessdom.PairingRequested{Code: "EXP2RD", Channel: telegram.Name, SenderID: "97", ChatID: "97", TurnID: "old-turn",
		ExpiresAt: time.Now().Add(-time.Hour)}
	ev, err := domain.NewEventFrom(old, domain.Metadata{CorrelationID: "old-turn"})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.n.rt.Store.Append(ctx, accessdom.SenderPairingStream, eventstore.Any, ev); err != nil {
		c.t.Fatal(err)
	}
	if got := c.command(tgOwner, "/pair approve exp2rd"); got != i18n.AccessText(i18n.English, i18n.AccessCodeExpired, "EXP2RD") {
		c.t.Fatalf("approving an expired code: %q", got)
	}
	if got := c.command(tgOwner, "/pair approve ZZZZZZ"); got != i18n.AccessText(i18n.English, i18n.AccessCodeUnknown, "ZZZZZZ") {
		c.t.Fatalf("approving an unknown code: %q", got)
	}
	if again := c.denied(c.say(cid, "hello?")); again.Code != offer.Code {
		c.t.Fatalf("the valid code changed: %+v", again)
	}
	list := c.command(tgOwner, "/pair list")
	if !strings.Contains(list, offer.Code) || strings.Contains(list, "EXP2RD") {
		c.t.Fatalf("pending list %q", list)
	}
}

func pairRateLimited(c pairingCase) {
	const dan int64 = 96
	for i := range 2 {
		offer := c.denied(c.say(dan, "knock knock"))
		if !offer.Fresh {
			c.t.Fatalf("code %d not fresh: %+v", i, offer)
		}
		c.command(tgOwner, "/pair reject "+offer.Code)
	}
	limited := c.denied(c.say(dan, "knock knock knock"))
	if !limited.Limited || limited.Code != "" {
		c.t.Fatalf("third code in an hour: %+v", limited)
	}
	if got := c.lastText(dan); got != i18n.AccessText(i18n.English, i18n.AccessPairingLimited) {
		c.t.Fatalf("limited sender got %q", got)
	}
	n := 0
	for _, p := range c.pairingEvents("PairingRequested") {
		if p.(accessdom.PairingRequested).SenderID == "96" {
			n++
		}
	}
	if n != 2 {
		c.t.Fatalf("%d codes recorded for a limited sender", n)
	}
}

func pairOnCommandLine(c pairingCase) {
	const eve int64 = 95
	offer := c.denied(c.say(eve, "hello from eve"))
	ctx := context.Background()
	cmd, err := commander.Open(ctx, c.n.rt.App)
	if err != nil {
		c.t.Fatal(err)
	}
	defer cmd.Close()
	var failed *messaging.CommandError
	if err := cmd.Do(ctx, &access.ApprovePairing{Code: "ZZZZZZ", By: "cli"}); !errors.As(err, &failed) || !strings.Contains(err.Error(), "no such pairing code") {
		c.t.Fatalf("approving an unknown code: %v", err)
	}
	if err := cmd.Do(ctx, &access.ApprovePairing{Code: offer.Code, By: "cli"}); err != nil {
		c.t.Fatal(err)
	}
	c.waitText(eve, i18n.AccessText(i18n.English, i18n.AccessApprovedSender))
	c.answered(c.say(eve, "am I in"), "echo: am I in")
	if n := len(c.pairingEvents("PairingSenderNotified")); n != 2 { // ana and eve, once each
		c.t.Fatalf("%d sender notices", n)
	}

	if err := cmd.Do(ctx, &access.RevokePairing{Channel: telegram.Name, SenderID: "95", By: "cli"}); err != nil {
		c.t.Fatal(err)
	}
	c.denied(c.say(eve, "and now?"))
	// Everything is in the audit of turns, once the read model has read
	// the last completion (on PostgreSQL that can wait for transactions of
	// other tests on the same server to end, past a single catch-up).
	waitFor(c.t, "two denied audit rows for eve", func() bool {
		if err := c.n.rt.Engine.CatchUp(ctx); err != nil {
			c.t.Fatal(err)
		}
		return c.n.queryInt(c.t, `SELECT count(*) FROM audit WHERE channel = 'telegram' AND sender_id = '95' AND status = 'denied'`) == 2
	})
}

// Linked identities share one profile across channels, on both backends:
// a fact and a personality learned through WhatsApp are in the prompt of
// a Telegram turn, replies go back on the channel each message came from,
// and unlinking separates them again.
func TestLinkedIdentitiesShareTheProfile(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, promptLog := richClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42")
			vars["OMEGA_WHATSAPP_ENABLED"] = "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			cfg := loadConfig(t, vars)
			tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
			if err != nil {
				t.Fatal(err)
			}
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs(), whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{tg, wa}, Auth: auth}, nil)
			c := pairingCase{t: t, n: n, api: api, vars: vars}
			const ana = "4915112345678"
			waSay := func(id, text string) []domain.Event {
				t.Helper()
				waitFor(t, "the channel to acknowledge "+id, func() bool {
					ok, err := fake.Deliver(whatsapptest.TextFrom(id, ana, text))
					if err != nil {
						t.Fatal(err)
					}
					return ok
				})
				return n.waitTurn(t, intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id}))
			}

			if got := c.command(tgOwner, "/link telegram:42 whatsapp:"+ana); got != i18n.AccessText(i18n.English, i18n.LinkDone, "whatsapp:"+ana, "telegram:42") {
				t.Fatalf("/link answered %q", got)
			}
			// Learned through WhatsApp: a personality by command, a fact on
			// the command line.
			if got := payload[turn.CommandAnswered](t, n, waSay("WALINK1", "/personality talk like a pirate")).Reply; !strings.Contains(got, "pirate") {
				t.Fatalf("/personality answered %q", got)
			}
			ctx := context.Background()
			cmd, err := commander.Open(ctx, n.rt.App)
			if err != nil {
				t.Fatal(err)
			}
			defer cmd.Close()
			if err := cmd.Do(ctx, &senders.RecordFact{Channel: whatsapp.Name, SenderID: ana, Key: "city", Value: "Lisbon", Source: "cli"}); err != nil {
				t.Fatal(err)
			}

			// A Telegram turn's prompt has both; its reply goes to Telegram.
			c.answered(c.say(tgOwner, "what do you know about me"), "echo: what do you know about me")
			prompts := readFile(t, promptLog)
			if !strings.Contains(prompts, "- city: Lisbon") || !strings.Contains(prompts, "talk like a pirate") {
				t.Fatalf("the Telegram prompt lacks what WhatsApp learned:\n%s", prompts)
			}
			// A WhatsApp turn is answered on WhatsApp, in the same profile.
			evs := waSay("WALINK2", "hello from whatsapp")
			if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
				t.Fatalf("whatsapp turn %s: %s", got, eventTypes(evs))
			}
			sent := fake.Sent()
			if last := sent[len(sent)-1]; last.To.User != ana || last.Text != "echo: hello from whatsapp" {
				t.Fatalf("whatsapp reply %+v", last)
			}
			if p, err := n.rt.Driver.Senders.Load(ctx, whatsapp.Name, ana); err != nil || p.Facts["city"] != "Lisbon" || p.Personality != "talk like a pirate" {
				t.Fatalf("whatsapp profile %+v %v", p, err)
			}
			c.rerunIdentical(evs)

			if got := c.command(tgOwner, "/link list"); !strings.Contains(got, "whatsapp:"+ana+" → telegram:42") {
				t.Fatalf("/link list answered %q", got)
			}
			if got := c.command(tgOwner, "/link remove whatsapp:"+ana); got != i18n.AccessText(i18n.English, i18n.LinkUndone, "whatsapp:"+ana) {
				t.Fatalf("/link remove answered %q", got)
			}
			if p, err := n.rt.Driver.Senders.Load(ctx, whatsapp.Name, ana); err != nil || p.Facts["city"] != "" || p.Personality != "" {
				t.Fatalf("unlinked whatsapp profile %+v %v", p, err)
			}
			if p, err := n.rt.Driver.Senders.Load(ctx, telegram.Name, "42"); err != nil || p.Facts["city"] != "Lisbon" {
				t.Fatalf("the canonical profile lost its fact: %+v %v", p, err)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
