package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
)

// inbox records what a running channel delivered and reported.
type inbox struct {
	mu     sync.Mutex
	got    []channels.Incoming
	health []channels.Health
	fail   int // deliveries to refuse first
}

func (b *inbox) deliver(_ context.Context, in channels.Incoming) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail > 0 {
		b.fail--
		return errors.New("store unavailable")
	}
	b.got = append(b.got, in)
	return nil
}

func (b *inbox) report(h channels.Health) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.health = append(b.health, h)
}

func (b *inbox) texts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, in := range b.got {
		out = append(out, in.Text)
	}
	return out
}

func (b *inbox) all() []channels.Incoming {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got)
}

func (b *inbox) states() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, h := range b.health {
		out = append(out, h.State)
	}
	return out
}

// run starts ch and stops it when the test ends.
func run(t *testing.T, ch *Channel) *inbox {
	t.Helper()
	b := &inbox{}
	ch.ReportHealth(b.report)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ch.Start(context.Background(), b.deliver)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ch.Stop(ctx)
		<-done
	})
	return b
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const within = 10 * time.Second

// An allowlisted person's invite is accepted and the direct chat
// answered; a stranger's invite is refused.
func TestInvites(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.channel(t, w.d.URL)
	b := run(t, ch)
	mallory := w.d.Register(t, "mallory")
	theirs := mallory.CreateRoom(t, false, w.bot.ID)
	ours := w.alice.CreateRoom(t, false, w.bot.ID)
	waitFor(t, "the bot joins alice's room", within, func() bool { return w.alice.Membership(t, ours, w.bot.ID) == "join" })
	waitFor(t, "the bot refuses mallory's room", within, func() bool { return mallory.Membership(t, theirs, w.bot.ID) == "leave" })
	id := w.alice.SendText(t, ours, "hi in the new room")
	waitFor(t, "the message delivered", within, func() bool { return len(b.texts()) == 1 })
	in := b.all()[0]
	if in.Text != "hi in the new room" || in.SenderID != w.alice.ID || in.ChatID != ours || in.PlatformID != id || in.IsGroup || in.SenderName != "alice" {
		t.Fatalf("delivered %+v", in)
	}
}

// In a room of three, only messages that mention the bot or reply to
// it are delivered.
func TestRoomsAnswerMentions(t *testing.T) {
	w := newWorld(t)
	bob := w.d.Register(t, "bob")
	room := w.alice.CreateRoom(t, false, w.bot.ID, bob.ID)
	bob.Join(t, room)
	w.bot.Join(t, room)
	ch, _ := w.channel(t, w.d.URL)
	b := run(t, ch)
	bobs := w.alice.SendText(t, room, "just talking to bob")
	w.alice.Reply(t, room, bobs, "replying to myself")
	w.alice.Mention(t, room, w.bot.ID, "what time is it?")
	res, err := ch.SendText(t.Context(), room, "noon")
	if err != nil {
		t.Fatal(err)
	}
	w.alice.Reply(t, room, res.PlatformIDs[0], "thanks")
	waitFor(t, "the mention and the reply delivered", within, func() bool { return len(b.texts()) > 1 })
	time.Sleep(500 * time.Millisecond)
	got := b.all()
	if len(got) != 2 || !got[0].IsGroup || !got[0].Mentioned || got[0].Text != w.bot.ID+": what time is it?" ||
		!got[1].Mentioned || got[1].Text != "thanks" {
		t.Fatalf("delivered %+v", got)
	}
}

// An encrypted message is not delivered; its sender is told, once, that
// the bot cannot read it.
func TestEncryptedRoomsRefused(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.channel(t, w.d.URL)
	b := run(t, ch)
	room := w.alice.CreateRoom(t, true, w.bot.ID)
	waitFor(t, "the bot joins", within, func() bool { return w.alice.Membership(t, room, w.bot.ID) == "join" })
	for range 2 {
		w.alice.Send(t, room, mxapi.TypeEncrypted, map[string]any{"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "sender_key": "k", "session_id": "s", "device_id": "D"})
	}
	var notices []string
	waitFor(t, "the notice", within, func() bool {
		msgs, _ := w.alice.Messages(t, room, w.bot.ID)
		notices = nil
		for _, m := range msgs {
			notices = append(notices, m.MsgType+" "+m.Body)
		}
		return len(notices) > 0
	})
	time.Sleep(500 * time.Millisecond)
	if msgs, _ := w.alice.Messages(t, room, w.bot.ID); len(msgs) != 1 || msgs[0].MsgType != mxapi.MsgNotice || msgs[0].Body != encryptedNotice {
		t.Fatalf("the bot sent %+v", msgs)
	}
	if got := b.texts(); len(got) != 0 {
		t.Fatalf("delivered %q", got)
	}
}

// An image arrives as an attachment, downloaded from the media API.
func TestImageIn(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.channel(t, w.d.URL)
	b := run(t, ch)
	data := []byte("\x89PNG\r\n\x1a\n alice's picture")
	w.alice.SendImage(t, w.dm, "cat.png", "image/png", data, "")
	w.alice.SendImage(t, w.dm, "dog.png", "image/png", data, "and my dog")
	waitFor(t, "the images delivered", within, func() bool { return len(b.texts()) == 2 })
	for i, want := range []struct{ name, text string }{{"cat.png", ""}, {"dog.png", "and my dog"}} {
		in := b.all()[i]
		if att := in.Attachments; len(att) != 1 || att[0].Name != want.name || att[0].MIME != "image/png" || string(att[0].Data) != string(data) || in.Text != want.text {
			t.Fatalf("delivered %+v", in)
		}
	}
}

// The sync position is kept where the last recorded batch ended: a new
// channel on the same store delivers what arrived while none ran, and
// nothing twice; a batch the pipeline failed to record is offered again.
func TestResumesFromStoredPosition(t *testing.T) {
	w := newWorld(t)
	ch, store := w.channel(t, w.d.URL)
	b := run(t, ch)
	b.mu.Lock()
	b.fail = 1
	b.mu.Unlock()
	w.alice.SendText(t, w.dm, "one")
	waitFor(t, "one delivered after a failed attempt", within, func() bool { return slices.Equal(b.texts(), []string{"one"}) })
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	if err := ch.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// More than a homeserver's default timeline (Dendrite's is 20).
	var away []string
	for i := range 30 {
		away = append(away, fmt.Sprintf("message %d while omega was away", i))
		w.alice.SendText(t, w.dm, away[i])
	}
	again, err := New(w.config(w.d.URL), nil, store)
	if err != nil {
		t.Fatal(err)
	}
	b2 := run(t, again)
	waitFor(t, "all delivered", within, func() bool { return len(b2.texts()) >= len(away) })
	time.Sleep(500 * time.Millisecond)
	if got := b2.texts(); !slices.Equal(got, away) {
		t.Fatalf("after the restart: %q", got)
	}
}

// A chat named by a user id (an owner alert's default destination) is
// the direct chat with that user: created once, then found again, also
// by a channel that starts afresh.
func TestSendToUserOpensDirectChat(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.channel(t, w.d.URL)
	if _, err := ch.SendText(t.Context(), w.alice.ID, "first alert"); err != nil {
		t.Fatal(err)
	}
	again, _ := w.channel(t, w.d.URL)
	res, err := again.SendText(t.Context(), w.alice.ID, "second alert")
	if err != nil {
		t.Fatal(err)
	}
	room := ch.rooms.direct[w.alice.ID]
	if room == "" || room == w.dm || again.rooms.direct[w.alice.ID] != room {
		t.Fatalf("direct chats %q and %q (the old one is %s)", room, again.rooms.direct[w.alice.ID], w.dm)
	}
	w.alice.Join(t, room)
	waitFor(t, "both alerts visible", within, func() bool {
		msgs, ids := w.alice.Messages(t, room, w.bot.ID)
		return len(msgs) == 2 && msgs[0].Body == "first alert" && ids[1] == res.PlatformIDs[0]
	})
}

// The typing indicator shows in the person's client.
func TestTyping(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.channel(t, w.d.URL)
	if err := ch.SendTyping(t.Context(), w.dm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bot shown typing", within, func() bool { return slices.Contains(w.alice.Typing(t, w.dm), w.bot.ID) })
}
