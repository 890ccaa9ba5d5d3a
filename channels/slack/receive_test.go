package slack

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/slack/slacktest"
)

// inbox is a Deliver that keeps what it was given and can fail.
type inbox struct {
	mu   sync.Mutex
	got  []channels.Incoming
	fail int // fail this many deliveries first
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

func (b *inbox) all() []channels.Incoming {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]channels.Incoming(nil), b.got...)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func start(t *testing.T, ch *Channel, b *inbox) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ch.Start(context.Background(), b.deliver) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ch.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("start: %v", err)
		}
	})
}

// Direct messages are answered where they were written; in a channel
// only a mention is delivered, once although Slack sends it as a message
// and an app_mention, and the answer goes to a thread under it.
func TestDirectMessagesAndMentions(t *testing.T) {
	s := slacktest.New(t)
	s.SetUserName(alice, "Alice")
	ch := newChannel(t, testConfig(s))
	b := &inbox{}
	start(t, ch, b)
	waitFor(t, "the socket", s.Connected)

	s.PushDM(alice, "hello &lt;there&gt;")
	s.PushChannel(alice, "CGENERAL", "talking among ourselves", "")
	mentionTS := s.PushChannel(alice, "CGENERAL", "<@"+slacktest.BotUserID+"> what time is it?", "")
	s.PushChannel(alice, "CGENERAL", "<@"+slacktest.BotUserID+"> and in the thread?", mentionTS)
	waitFor(t, "three deliveries and every envelope acknowledged", func() bool { return len(b.all()) >= 3 && s.Pending() == 0 })
	got := b.all()
	if len(got) != 3 {
		t.Fatalf("delivered %d messages: %+v", len(got), got)
	}
	dm, top, inThread := got[0], got[1], got[2]
	if dm.ChatID != slacktest.DMChannel(alice) || dm.IsGroup || dm.Text != "hello <there>" || dm.SenderID != alice || dm.SenderName != "Alice" {
		t.Errorf("direct message delivered as %+v", dm)
	}
	if top.ChatID != "CGENERAL/"+mentionTS || !top.IsGroup || !top.Mentioned || top.Text != "what time is it?" {
		t.Errorf("mention delivered as %+v", top)
	}
	if inThread.ChatID != "CGENERAL/"+mentionTS || inThread.PlatformID == top.PlatformID {
		t.Errorf("thread reply delivered as %+v", inThread)
	}
	if len(s.Acked()) != 6 {
		t.Errorf("acknowledged %d envelopes, want all 6", len(s.Acked()))
	}

	if _, err := ch.SendText(t.Context(), top.ChatID, "It is **noon**, see [the clock](https://time.is)"); err != nil {
		t.Fatal(err)
	}
	sent := s.Messages("CGENERAL")
	if len(sent) != 1 || sent[0].ThreadTS != mentionTS || sent[0].Text != "It is *noon*, see <https://time.is|the clock>" {
		t.Fatalf("posted %+v", sent)
	}
}

// A shared file reaches the pipeline as an attachment, downloaded with
// the bot token.
func TestFilesArriveAsAttachments(t *testing.T) {
	s := slacktest.New(t)
	ch := newChannel(t, testConfig(s))
	b := &inbox{}
	start(t, ch, b)
	waitFor(t, "the socket", s.Connected)
	png := []byte("\x89PNG\r\n\x1a\n pixels")
	s.PushFile(alice, slacktest.DMChannel(alice), "im", "look", "cat.png", "image/png", png)
	waitFor(t, "the file", func() bool { return len(b.all()) == 1 })
	in := b.all()[0]
	if len(in.Attachments) != 1 || string(in.Attachments[0].Data) != string(png) || in.Attachments[0].MIME != "image/png" || in.Attachments[0].Name != "cat.png" {
		t.Fatalf("attachments %+v", in.Attachments)
	}
}

// A message the pipeline could not record is not acknowledged, so Slack
// offers it again (here after the connection is refreshed); it is then
// delivered once.
func TestUnrecordedMessageIsOfferedAgain(t *testing.T) {
	s := slacktest.New(t)
	ch := newChannel(t, testConfig(s))
	h := &healthLog{}
	ch.ReportHealth(h.report)
	b := &inbox{fail: 1}
	start(t, ch, b)
	waitFor(t, "the socket", s.Connected)
	s.PushDM(alice, "keep me")
	waitFor(t, "the failed delivery", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.fail == 0
	})
	if s.Pending() != 1 {
		t.Fatalf("%d envelopes pending after a failed delivery, want 1 (unacknowledged)", s.Pending())
	}
	s.Disconnect("refresh_requested")
	waitFor(t, "the redelivery", func() bool { return len(b.all()) == 1 && s.Pending() == 0 })
	if got := b.all(); got[0].Text != "keep me" {
		t.Fatalf("delivered %+v", got)
	}
	if states := h.states(); len(states) != 0 || s.Hellos() != 2 {
		t.Fatalf("a refresh Slack asked for changed health %v (%d connections)", states, s.Hellos())
	}
	// Socket Mode turned off in the app's settings is an outage.
	s.Disconnect("link_disabled")
	waitFor(t, "down", func() bool { return h.last() == channels.HealthDown })
	h.mu.Lock()
	got := h.got[0].Err
	h.mu.Unlock()
	if !strings.Contains(got, "link_disabled") {
		t.Fatalf("recorded %q", got)
	}
}

// A 429 is waited out for as long as Retry-After says, then the message
// goes once.
func TestRateLimitIsHonoured(t *testing.T) {
	s := slacktest.New(t)
	var slept []time.Duration
	ch := newChannel(t, testConfig(s), WithSleep(func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}))
	s.RateLimit("chat.postMessage", 7)
	s.RateLimit("files.getUploadURLExternal", 3)
	if _, err := ch.SendText(t.Context(), "CGENERAL/1.2", "after the limit"); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.SendPhotoResult(t.Context(), "CGENERAL", channels.Attachment{Name: "a.png", Data: []byte("png")}, "a *caption*"); err != nil {
		t.Fatal(err)
	}
	if len(slept) != 2 || slept[0] != 7*time.Second || slept[1] != 3*time.Second {
		t.Fatalf("waited %v, want [7s 3s]", slept)
	}
	if got := s.Messages("CGENERAL"); len(got) != 1 || s.Calls("chat.postMessage") != 2 {
		t.Fatalf("posted %+v in %d calls", got, s.Calls("chat.postMessage"))
	}
	if up := s.Uploads(); len(up) != 1 || up[0].Comment != "a _caption_" || string(up[0].Data) != "png" {
		t.Fatalf("uploads %+v", up)
	}
}

func TestSendToBadChatIsRejected(t *testing.T) {
	s := slacktest.New(t)
	ch := newChannel(t, testConfig(s))
	if _, err := ch.SendText(t.Context(), "", "x"); !errors.Is(err, channels.ErrRejected) {
		t.Fatalf("empty chat: %v", err)
	}
	if _, err := ch.SendText(t.Context(), "C1", "  "); !errors.Is(err, channels.ErrRejected) {
		t.Fatalf("empty text: %v", err)
	}
	s.RefuseNext("chat.postMessage", "invalid_auth")
	if _, err := ch.SendText(t.Context(), "C1", "x"); !errors.Is(err, channels.ErrNotConnected) || strings.Contains(err.Error(), slacktest.BotToken) {
		t.Fatalf("revoked token: %v", err)
	}
}
