// Package channeltest is the conformance suite every channels.Channel
// implementation runs against its protocol double (the Telegram test
// server, the fake WhatsApp client, pipes for the terminal), in the style
// of eventstore/storetest: the port's contract is written once, here.
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

// Harness is one channel wired to its platform double. Optional parts are
// nil when the platform has no such behaviour; the suite then skips the
// test that needs it, saying why.
type Harness struct {
	Channel channels.Channel
	// ChatID is a chat the channel can send to.
	ChatID string
	// Receive makes the platform hand the running channel a text message
	// from a person. nil: the channel records input itself (HTTP).
	Receive func(t *testing.T, text string)
	// Sent returns the texts the platform accepted so far, in order. nil:
	// the channel pushes nothing (HTTP clients read replies from the log).
	Sent func(t *testing.T) []string
	// Refuse makes the platform refuse the next send with the failure that
	// class (channels.ErrBlocked, channels.ErrRejected) stands for; it
	// reports false when the platform has no such failure.
	Refuse func(t *testing.T, class error) bool
	// MaxChunk is the longest text the platform takes in one message (0:
	// no limit, no chunking).
	MaxChunk int
	// Photos returns the image bytes the platform accepted so far, in
	// order. nil: the platform shows no images.
	Photos func(t *testing.T) [][]byte
	// Visible returns the texts of the messages ChatID shows now, in
	// order, each as last edited. nil: the suite cannot see the chat, and
	// skips the preview test.
	Visible func(t *testing.T) []string
	// Advance lets d pass on the channel's clock, running its timers
	// (WithClock, WithTimer). nil: the suite waits in real time.
	Advance func(d time.Duration)
	// Unnumbered: the platform gives messages no ids (a pipe), so the
	// order test checks order only, not distinct PlatformIDs.
	Unnumbered bool
	// Restart returns a fresh, unstarted channel on the same platform
	// state and the same stored position (sync token, cursors, seen
	// flags) as Channel, as a restarted process would build it. nil: the
	// channel keeps no position to resume from.
	Restart func(t *testing.T) channels.Channel
	// ReceiveImage makes a person send the image data (of type mime) to
	// the running channel. nil: the channel takes no media in.
	ReceiveImage func(t *testing.T, data []byte, mime string)
	// ReceiveGroup makes a person write text in a group chat the bot is
	// in, mentioning the bot when mention is true. nil: no group chats.
	ReceiveGroup func(t *testing.T, text string, mention bool)
	// ReceiveStranger makes someone off the allowlist write text and
	// returns their sender id. nil: the channel itself admits only
	// allowlisted senders (a stranger cannot reach the pipeline there).
	ReceiveStranger func(t *testing.T, text string) string
}

// wait bounds every wait for the channel; the doubles answer at once.
const wait = 10 * time.Second

// Run runs the suite; newHarness returns a fresh, unstarted channel.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("StopEndsStartAndIsIdempotent", func(t *testing.T) { testStop(t, newHarness(t)) })
	t.Run("ContextEndsStart", func(t *testing.T) { testContext(t, newHarness(t)) })
	t.Run("DeliversIncoming", func(t *testing.T) { testDeliver(t, newHarness(t)) })
	t.Run("SendsText", func(t *testing.T) { testSend(t, newHarness(t)) })
	t.Run("ChunksLongText", func(t *testing.T) { testChunks(t, newHarness(t)) })
	t.Run("SendFailureClasses", func(t *testing.T) { testFailures(t, newHarness(t)) })
	t.Run("SendsPhoto", func(t *testing.T) { testPhoto(t, newHarness(t)) })
	t.Run("PreviewIsOneMessage", func(t *testing.T) { testPreview(t, newHarness(t)) })
	t.Run("DeliversInOrder", func(t *testing.T) { testOrder(t, newHarness(t)) })
	t.Run("RedeliversAfterRestart", func(t *testing.T) { testRestart(t, newHarness(t)) })
	t.Run("DeliversImage", func(t *testing.T) { testImageIn(t, newHarness(t)) })
	t.Run("GroupMentions", func(t *testing.T) { testGroups(t, newHarness(t)) })
	t.Run("DeliversStranger", func(t *testing.T) { testStranger(t, newHarness(t)) })
}

// recorder is a Deliver that keeps what it was given.
type recorder struct {
	mu  sync.Mutex
	got []channels.Incoming
	ch  chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 100)} }

func (r *recorder) deliver(_ context.Context, in channels.Incoming) error {
	r.mu.Lock()
	r.got = append(r.got, in)
	r.mu.Unlock()
	r.ch <- struct{}{}
	return nil
}

// started runs Start in the background and returns its result channel.
func started(t *testing.T, ctx context.Context, h Harness, deliver channels.Deliver) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.Channel.Start(ctx, deliver) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = h.Channel.Stop(ctx)
	})
	return done
}

func ended(t *testing.T, done <-chan error, after string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Start returned %v after %s", err, after)
		}
	case <-time.After(wait):
		t.Fatalf("Start still running %s after %s", wait, after)
	}
}

func testStop(t *testing.T, h Harness) {
	done := started(t, t.Context(), h, newRecorder().deliver)
	time.Sleep(20 * time.Millisecond) // let Start reach its loop; a Stop before that must work too
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Channel.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ended(t, done, "Stop")
	if err := h.Channel.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func testContext(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(t.Context())
	done := started(t, ctx, h, newRecorder().deliver)
	time.Sleep(20 * time.Millisecond)
	cancel()
	ended(t, done, "its context ended")
}

func testDeliver(t *testing.T, h Harness) {
	if h.Receive == nil {
		t.Skip("the channel records input itself")
	}
	rec := newRecorder()
	started(t, t.Context(), h, rec.deliver)
	h.Receive(t, "hello from the suite")
	select {
	case <-rec.ch:
	case <-time.After(wait):
		t.Fatal("the message never reached Deliver")
	}
	rec.mu.Lock()
	in := rec.got[0]
	rec.mu.Unlock()
	if in.Text != "hello from the suite" || in.Channel != h.Channel.Name() || in.SenderID == "" || in.ChatID == "" {
		t.Fatalf("delivered %+v", in)
	}
}

func testSend(t *testing.T, h Harness) {
	if h.Sent == nil {
		t.Skip("the channel pushes nothing; clients read replies from the log")
	}
	res, err := h.Channel.SendText(t.Context(), h.ChatID, "plain words from the suite")
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	sent := h.Sent(t)
	if res.Chunks != 1 || len(sent) != 1 || !strings.Contains(sent[0], "plain words from the suite") {
		t.Fatalf("result %+v, platform got %q", res, sent)
	}
}

func testChunks(t *testing.T, h Harness) {
	if h.MaxChunk == 0 || h.Sent == nil {
		t.Skip("the platform takes any length")
	}
	var b strings.Builder
	for i := 0; b.Len() < 3*h.MaxChunk; i++ {
		fmt.Fprintf(&b, "word%d ", i)
		if i%50 == 49 {
			b.WriteString("\n\n")
		}
	}
	long := b.String()
	res, err := h.Channel.SendText(t.Context(), h.ChatID, long)
	if err != nil {
		t.Fatalf("SendText: %v", err)
	}
	sent := h.Sent(t)
	if res.Chunks < 3 || len(sent) != res.Chunks {
		t.Fatalf("%d chunks reported, %d messages sent for %d bytes (limit %d)", res.Chunks, len(sent), len(long), h.MaxChunk)
	}
	for i, s := range sent {
		if len(s) > h.MaxChunk {
			t.Errorf("chunk %d has %d bytes, limit %d", i, len(s), h.MaxChunk)
		}
	}
	if got, want := strings.Fields(strings.Join(sent, " ")), strings.Fields(long); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the chunks do not add up to the text: %d words sent, %d written", len(got), len(want))
	}
}

func testFailures(t *testing.T, h Harness) {
	if h.Refuse == nil {
		t.Skip("the platform never refuses a send")
	}
	for _, class := range []error{channels.ErrBlocked, channels.ErrRejected} {
		if !h.Refuse(t, class) {
			continue
		}
		_, err := h.Channel.SendText(t.Context(), h.ChatID, "refused")
		if !errors.Is(err, class) {
			t.Errorf("refused as %v: SendText returned %v", class, err)
		}
	}
}

func testPhoto(t *testing.T, h Harness) {
	if h.Photos == nil {
		t.Skip("the platform shows no images")
	}
	data := []byte("\x89PNG\r\n\x1a\n a tiny image from the suite")
	photo := channels.Attachment{Name: "suite.png", MIME: "image/png", Data: data}
	res, err := channels.SendPhoto(t.Context(), h.Channel, h.ChatID, photo, "")
	if err != nil {
		t.Fatalf("SendPhoto: %v", err)
	}
	got := h.Photos(t)
	if len(got) != 1 || string(got[0]) != string(data) {
		t.Fatalf("platform got %d photo(s), want the one sent", len(got))
	}
	if _, reports := h.Channel.(channels.PhotoReporter); reports && (res.Chunks != 1 || len(res.PlatformIDs) != 1 || res.PlatformIDs[0] == "") {
		t.Fatalf("SendPhotoResult reported %+v, want one message id", res)
	}
}
