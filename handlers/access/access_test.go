package access_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/access"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// chat records what is sent to each chat.
type chat struct {
	mu   sync.Mutex
	sent map[string][]string
}

func (c *chat) Name() string                                        { return "telegram" }
func (c *chat) Start(ctx context.Context, _ channels.Deliver) error { <-ctx.Done(); return nil }
func (c *chat) SendTyping(context.Context, string) error            { return nil }
func (c *chat) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return nil
}
func (c *chat) Stop(context.Context) error { return nil }
func (c *chat) SendText(_ context.Context, to, text string) (channels.SendResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sent == nil {
		c.sent = map[string][]string{}
	}
	c.sent[to] = append(c.sent[to], text)
	return channels.SendResult{Chunks: 1}, nil
}
func (c *chat) texts(to string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent[to]...)
}
func (c *chat) Channel(name string) (channels.Channel, bool) { return c, name == "telegram" }

func newService(t *testing.T, now *time.Time) (*access.Service, *chat) {
	t.Helper()
	reg := app.NewRegistry()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet, Versions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	out := &chat{}
	svc, err := access.New(access.Config{Store: s, Registry: reg, Allowed: map[string][]string{"telegram": {"42"}},
		Channels: out, OwnerChannel: "telegram", OwnerChat: "42", Location: time.UTC, Logger: quiet,
		Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return svc, out
}

func turnFrom(id, sender string, trusted bool) *turn.Turn {
	return &turn.Turn{ID: id, Received: &turn.MessageReceived{Channel: "telegram", SenderID: sender, ChatID: sender, Trusted: trusted}}
}

// The owner's /pair and /link answers, one case after another on one
// store: usage, owner-only, codes that do not exist or expired, and
// links refused with their reason.
func TestOwnerCommands(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	svc, out := newService(t, &now)
	ctx := context.Background()
	msg := &turn.MessageReceived{Channel: "telegram", SenderID: "99", SenderName: "Ana", ChatID: "99", Text: "hola, quiero hablar contigo por favor"}
	denied, err := svc.Offer(ctx, "t-ana", msg)
	if err != nil || denied.Pairing == nil || !denied.Pairing.Fresh {
		t.Fatalf("offer %+v %v", denied, err)
	}
	code := denied.Pairing.Code
	if got := out.texts("42"); len(got) != 1 || !strings.Contains(got[0], "Ana (telegram:99)") || !strings.Contains(got[0], "/pair reject "+code) {
		t.Fatalf("owner notice %q", got)
	}
	if again, _ := svc.Offer(ctx, "t-ana", msg); again.Pairing.Code != code || len(out.texts("42")) != 1 {
		t.Fatalf("a resumed turn notified again or changed code: %+v", again)
	}

	en := func(k i18n.Key, args ...any) string { return i18n.AccessText(i18n.English, k, args...) }
	cases := []struct {
		name, from string
		trusted    bool
		link       bool
		arg, want  string
	}{
		{"a stranger may not", "99", false, false, "list", en(i18n.AccessOwnerOnly)},
		{"nor link", "99", false, true, "list", en(i18n.AccessOwnerOnly)},
		{"list pending", "42", false, false, "", en(i18n.AccessPairList, "- "+code+": Ana (telegram:99), 1 Jan 11:00 UTC")},
		{"usage", "42", false, false, "approve", en(i18n.AccessPairUsage)},
		{"unknown verb", "42", false, false, "maybe " + code, en(i18n.AccessPairUsage)},
		{"unknown code", "42", false, false, "reject QQQQQQ", en(i18n.AccessCodeUnknown, "QQQQQQ")},
		{"revoke someone not paired", "42", false, false, "revoke telegram:7", en(i18n.AccessNotPaired, "telegram:7")},
		{"owner channel may approve", "terminal-user", true, false, "approve " + code, en(i18n.AccessApproved, "telegram:99", code)},
		{"nothing pending", "42", false, false, "list", en(i18n.AccessPairNone)},
		{"no links", "42", false, true, "", en(i18n.LinkNone)},
		{"link usage", "42", false, true, "a b c", en(i18n.LinkUsage)},
		{"bad identity", "42", false, true, "telegram whatsapp:1", en(i18n.LinkRefused, `want channel:id: "telegram"`) + "\n" + en(i18n.LinkUsage)},
		{"link", "42", false, true, "telegram:42 whatsapp:1", en(i18n.LinkDone, "whatsapp:1", "telegram:42")},
		{"list links", "42", false, true, "list", en(i18n.LinkList, "- whatsapp:1 → telegram:42")},
		{"unlink", "42", false, true, "remove whatsapp:1", en(i18n.LinkUndone, "whatsapp:1")},
		{"unlink again", "42", false, true, "remove whatsapp:1", en(i18n.LinkRefused, "whatsapp:1: not linked") + "\n" + en(i18n.LinkUsage)},
	}
	for i, c := range cases {
		tn := turnFrom("t"+string(rune('a'+i)), c.from, c.trusted)
		answer := svc.Pair
		if c.link {
			answer = svc.Link
		}
		got, err := answer(ctx, tn, i18n.English, c.arg)
		if err != nil || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.name, got, err, c.want)
		}
	}

	// The approved sender is told once, in the language they wrote in.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- svc.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(out.texts("99")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.texts("99"); len(got) != 1 || got[0] != i18n.AccessText(i18n.Spanish, i18n.AccessApprovedSender) {
		t.Fatalf("the approved sender got %q", got)
	}
	if ok, err := svc.Approved(ctx, msg); !ok || err != nil {
		t.Fatalf("approved = %v %v", ok, err)
	}

	// Past its TTL a code cannot be approved.
	other := &turn.MessageReceived{Channel: "telegram", SenderID: "98", ChatID: "98", Text: "hi"}
	late, err := svc.Offer(ctx, "t-bob", other)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(access.DefaultCodeTTL)
	if got, _ := svc.Pair(ctx, turnFrom("t-late", "42", false), i18n.English, "approve "+late.Pairing.Code); got != en(i18n.AccessCodeExpired, late.Pairing.Code) {
		t.Fatalf("approving an expired code: %q", got)
	}
}

// Who may pair: private messages on allowlisted channels only.
func TestApplies(t *testing.T) {
	now := time.Now()
	svc, _ := newService(t, &now)
	for _, c := range []struct {
		name string
		m    turn.MessageReceived
		want bool
	}{
		{"private message on telegram", turn.MessageReceived{Channel: "telegram", SenderID: "9"}, true},
		{"group", turn.MessageReceived{Channel: "telegram", SenderID: "9", IsGroup: true}, false},
		{"owner channel", turn.MessageReceived{Channel: "telegram", SenderID: "9", Trusted: true}, false},
		{"channel without allowlist", turn.MessageReceived{Channel: "http", SenderID: "9"}, false},
		{"scheduled action", turn.MessageReceived{Channel: "telegram", SenderID: "9", Task: &turn.TaskOrigin{}}, false},
	} {
		if got := svc.Applies(&c.m); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}
