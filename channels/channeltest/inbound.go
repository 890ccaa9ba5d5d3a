package channeltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// orderCount is how many messages the order test sends back to back.
const orderCount = 8

// inbox is a Deliver that keeps every attempt and can refuse some, as a
// pipeline whose store failed would.
type inbox struct {
	mu     sync.Mutex
	got    []channels.Incoming
	refuse func(channels.Incoming) bool
	wake   chan struct{}
}

func newInbox(refuse func(channels.Incoming) bool) *inbox {
	return &inbox{refuse: refuse, wake: make(chan struct{}, 1)}
}

func (b *inbox) deliver(_ context.Context, in channels.Incoming) error {
	b.mu.Lock()
	b.got = append(b.got, in)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	if b.refuse != nil && b.refuse(in) {
		return errors.New("suite: the store is down")
	}
	return nil
}

func (b *inbox) all() []channels.Incoming {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]channels.Incoming(nil), b.got...)
}

// await waits until a delivered message's text contains text and
// returns the first such message.
func (b *inbox) await(t *testing.T, text string) channels.Incoming {
	t.Helper()
	deadline := time.After(wait)
	for {
		for _, in := range b.all() {
			if strings.Contains(in.Text, text) {
				return in
			}
		}
		select {
		case <-b.wake:
		case <-deadline:
			t.Fatalf("%q never reached Deliver; got %d message(s)", text, len(b.all()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// matching returns the delivered messages whose text contains text.
func (b *inbox) matching(text string) []channels.Incoming {
	var out []channels.Incoming
	for _, in := range b.all() {
		if strings.Contains(in.Text, text) {
			out = append(out, in)
		}
	}
	return out
}

func testOrder(t *testing.T, h Harness) {
	if h.Receive == nil {
		t.Skip("the channel records input itself")
	}
	box := newInbox(nil)
	started(t, t.Context(), h, box.deliver)
	texts := make([]string, orderCount)
	for i := range texts {
		texts[i] = fmt.Sprintf("ordered message %02d", i)
		h.Receive(t, texts[i])
	}
	box.await(t, texts[len(texts)-1])
	got := box.all()
	if len(got) != len(texts) {
		t.Fatalf("%d messages sent, %d delivered", len(texts), len(got))
	}
	seen := map[string]bool{}
	for i, in := range got {
		if !strings.Contains(in.Text, texts[i]) {
			t.Fatalf("message %d delivered as %q, want %q (order lost)", i, in.Text, texts[i])
		}
		if h.Unnumbered {
			continue
		}
		if in.PlatformID == "" || seen[in.PlatformID] {
			t.Fatalf("message %d has PlatformID %q: want distinct, non-empty ids", i, in.PlatformID)
		}
		seen[in.PlatformID] = true
	}
}

// testRestart: a message whose Deliver failed before a restart comes
// again with the same PlatformID; one delivered comes again only with
// its own PlatformID (so the pipeline's dedup drops it).
func testRestart(t *testing.T, h Harness) {
	if h.Restart == nil || h.Receive == nil {
		t.Skip("the channel keeps no position to resume from")
	}
	first := newInbox(func(in channels.Incoming) bool { return strings.Contains(in.Text, "refused before restart") })
	done := started(t, t.Context(), h, first.deliver)
	h.Receive(t, "delivered before restart")
	okID := first.await(t, "delivered before restart").PlatformID
	h.Receive(t, "refused before restart")
	failedID := first.await(t, "refused before restart").PlatformID
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Channel.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ended(t, done, "Stop")

	again := Harness{Channel: h.Restart(t)}
	second := newInbox(nil)
	started(t, t.Context(), again, second.deliver)
	if in := second.await(t, "refused before restart"); in.PlatformID != failedID {
		t.Fatalf("the refused message came back as %q, want the same PlatformID %q", in.PlatformID, failedID)
	}
	h.Receive(t, "sent after restart")
	second.await(t, "sent after restart")
	for _, in := range second.matching("delivered before restart") {
		if in.PlatformID != okID {
			t.Fatalf("a delivered message came again as %q, not its PlatformID %q: the pipeline would answer it twice", in.PlatformID, okID)
		}
	}
}

func testImageIn(t *testing.T, h Harness) {
	if h.ReceiveImage == nil {
		t.Skip("the channel takes no media in")
	}
	box := newInbox(nil)
	started(t, t.Context(), h, box.deliver)
	// JPEG: the one type every platform passes through (Telegram
	// recompresses any photo to it).
	data := []byte("\xff\xd8\xff\xe0 an image a person sent to the suite")
	h.ReceiveImage(t, data, "image/jpeg")
	deadline := time.After(wait)
	for {
		for _, in := range box.all() {
			for _, a := range in.Attachments {
				if string(a.Data) == string(data) && a.MIME == "image/jpeg" {
					return
				}
			}
			if len(in.Attachments) > 0 {
				t.Fatalf("attachment arrived as %s, %d bytes; want image/jpeg, %d bytes", in.Attachments[0].MIME, len(in.Attachments[0].Data), len(data))
			}
		}
		select {
		case <-box.wake:
		case <-deadline:
			t.Fatalf("the image never reached Deliver; got %d message(s)", len(box.all()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// testGroups: in a group, a mention arrives with IsGroup and Mentioned.
// A message without one either arrives with IsGroup and not Mentioned
// (the pipeline decides) or not at all (the channel filters) — the same
// way each time.
func testGroups(t *testing.T, h Harness) {
	if h.ReceiveGroup == nil {
		t.Skip("the platform has no group chats")
	}
	box := newInbox(nil)
	started(t, t.Context(), h, box.deliver)
	for i := range 2 {
		h.ReceiveGroup(t, fmt.Sprintf("group chatter %d", i), false)
		h.ReceiveGroup(t, fmt.Sprintf("group question %d", i), true)
	}
	box.await(t, "group question 1")
	for _, in := range box.matching("group question") {
		if !in.IsGroup || !in.Mentioned {
			t.Errorf("a mention in a group arrived with IsGroup=%v Mentioned=%v", in.IsGroup, in.Mentioned)
		}
	}
	chatter := box.matching("group chatter")
	for _, in := range chatter {
		if !in.IsGroup || in.Mentioned {
			t.Errorf("group chatter arrived with IsGroup=%v Mentioned=%v, want true, false", in.IsGroup, in.Mentioned)
		}
	}
	if len(chatter) == 1 {
		t.Errorf("one of two unmentioned group messages arrived: a channel delivers them all or filters them all")
	}
}

func testStranger(t *testing.T, h Harness) {
	if h.ReceiveStranger == nil {
		t.Skip("the channel admits only allowlisted senders itself")
	}
	box := newInbox(nil)
	started(t, t.Context(), h, box.deliver)
	sender := h.ReceiveStranger(t, "hello from a stranger")
	in := box.await(t, "hello from a stranger")
	if in.SenderID != sender || in.Trusted {
		t.Fatalf("a stranger's message arrived from %q (trusted %v), want %q: the pipeline could not offer pairing", in.SenderID, in.Trusted, sender)
	}
}
