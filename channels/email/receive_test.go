package email

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/email/emailtest"
)

const patience = 10 * time.Second

// inbox is a Deliver that keeps what it got and fails while told to.
type inbox struct {
	mu   sync.Mutex
	got  []channels.Incoming
	fail error
	ch   chan channels.Incoming
}

func newInbox() *inbox { return &inbox{ch: make(chan channels.Incoming, 100)} }

func (b *inbox) deliver(_ context.Context, in channels.Incoming) error {
	b.mu.Lock()
	fail := b.fail
	if fail == nil {
		b.got = append(b.got, in)
	}
	b.mu.Unlock()
	b.ch <- in
	return fail
}

func (b *inbox) setFail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fail = err
}

func (b *inbox) next(t *testing.T) channels.Incoming {
	t.Helper()
	select {
	case in := <-b.ch:
		return in
	case <-time.After(patience):
		t.Fatal("no message reached Deliver")
	}
	return channels.Incoming{}
}

func (b *inbox) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case in := <-b.ch:
		t.Fatalf("unexpected delivery %+v", in)
	case <-time.After(d):
	}
}

func run(t *testing.T, ch *Channel, deliver channels.Deliver) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- ch.Start(t.Context(), deliver) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if err := ch.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("start: %v", err)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A message stays unseen while the pipeline fails to record it, is
// offered again, and is marked \Seen only once Deliver returned nil; its
// Message-ID is the dedup key.
func TestSeenOnlyAfterRecorded(t *testing.T) {
	s := startServer(t)
	b := newInbox()
	b.setFail(errors.New("store down"))
	ch := newChannel(t, s.config())
	hl := &healthLog{}
	ch.ReportHealth(hl.add)
	run(t, ch, b.deliver)
	id := s.send(t, alice, "Plans", "what is on today?")
	first := b.next(t)
	if first.PlatformID != id || first.SenderID != alice || first.ChatID != alice || first.Text != "what is on today?" {
		t.Fatalf("delivered %+v", first)
	}
	if s.d.Seen(t, bot, id) {
		t.Fatal("marked seen although Deliver failed")
	}
	b.setFail(nil)
	again := b.next(t)
	if again.PlatformID != id {
		t.Fatalf("offered again %+v", again)
	}
	waitFor(t, "the \\Seen flag", func() bool { return s.d.Seen(t, bot, id) })
	if got := hl.states(); got != "" {
		t.Errorf("omega's own failure reported as the mail server's: %s", got)
	}
}

// A reply joins the sender's thread: "Re:" subject, In-Reply-To and
// References, plain text plus the Markdown rendered as HTML.
func TestReplyIsThreaded(t *testing.T) {
	s := startServer(t)
	b := newInbox()
	ch := newChannel(t, s.config())
	run(t, ch, b.deliver)
	id := s.send(t, alice, "Plans for Friday", "any ideas?", "References: <root@example.test>", "In-Reply-To: <root@example.test>")
	b.next(t)
	res, err := ch.SendText(t.Context(), alice, "Try **the lake**:\n\n- swim\n- picnic")
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.d.Messages(t, alice)
	if len(msgs) != 1 {
		t.Fatalf("%d messages in alice's mailbox", len(msgs))
	}
	m := msgs[0]
	if m.Subject != "Re: Plans for Friday" || m.InReplyTo != id || m.References != "<root@example.test> "+id {
		t.Errorf("thread headers: subject %q in-reply-to %q references %q", m.Subject, m.InReplyTo, m.References)
	}
	if len(res.PlatformIDs) != 1 || m.MessageID != res.PlatformIDs[0] || m.AutoSubmitted != "auto-replied" {
		t.Errorf("message id %q auto-submitted %q, result %+v", m.MessageID, m.AutoSubmitted, res)
	}
	if !strings.Contains(m.Plain, "Try **the lake**") || !strings.Contains(m.HTML, "<b>the lake</b>") || !strings.Contains(m.HTML, "• swim") {
		t.Errorf("plain %q\nhtml %q", m.Plain, m.HTML)
	}
}

// Quoted history and the signature never reach the turn; an attachment
// does.
func TestReplyTextAndAttachments(t *testing.T) {
	s := startServer(t)
	b := newInbox()
	run(t, newChannel(t, s.config()), b.deliver)
	raw := "From: Alice <alice@example.test>\r\nTo: " + bot + "\r\nSubject: Re: photo\r\nMessage-ID: <att1@example.test>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n" +
		"--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nWhat is in this picture?\r\n\r\n-- \r\nAlice, sent from my phone\r\n\r\n" +
		"On Thu, 26 Nov 2026 at 10:00, omega <" + bot + "> wrote:\r\n> Send me the photo.\r\n" +
		"--XX\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"../cat.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--XX--\r\n"
	s.d.Deliver(t, alice, []string{bot}, []byte(raw))
	in := b.next(t)
	if in.Text != "What is in this picture?" || in.SenderName != "Alice" {
		t.Errorf("text %q name %q", in.Text, in.SenderName)
	}
	if len(in.Attachments) != 1 || in.Attachments[0].Name != "cat.png" || in.Attachments[0].MIME != "image/png" || string(in.Attachments[0].Data) != "\x89PNG\r\n\x1a\n" {
		t.Errorf("attachments %+v", in.Attachments)
	}
}

// Auto-replies and bounces are marked seen and never delivered, so two
// robots cannot answer each other for ever; so is mail from senders off
// the allowlist.
func TestAutomaticAndStrangersMailIsNotDelivered(t *testing.T) {
	s := startServer(t)
	b := newInbox()
	run(t, newChannel(t, s.config()), b.deliver)
	auto := s.send(t, alice, "Out of office", "I am away.", "Auto-Submitted: auto-replied")
	waitFor(t, "the auto-reply marked seen", func() bool { return s.d.Seen(t, bot, auto) })
	stranger := s.send(t, "stranger@example.test", "Hi", "who are you")
	waitFor(t, "the stranger's mail marked seen", func() bool { return s.d.Seen(t, bot, stranger) })
	human := s.send(t, alice, "Back", "I am back.")
	if in := b.next(t); in.PlatformID != human {
		t.Fatalf("delivered %+v, want only the person's message", in)
	}
}

// Without IDLE the channel polls.
func TestPollsWithoutIdle(t *testing.T) {
	d := emailtest.StartDovecotWith(t, emailtest.Options{NoIdle: true, Submission: true}, bot, alice)
	s := server{d: d, sub: d.Relay}
	cfg := s.config()
	cfg.PollInterval = 200 * time.Millisecond
	b := newInbox()
	run(t, newChannel(t, cfg), b.deliver)
	time.Sleep(300 * time.Millisecond) // past the first search: only a poll finds the next message
	id := s.send(t, alice, "poll", "found by polling")
	if in := b.next(t); in.PlatformID != id {
		t.Fatalf("delivered %+v", in)
	}
}

// healthLog keeps the health changes a channel reports.
type healthLog struct {
	mu  sync.Mutex
	evs []channels.Health
}

func (h *healthLog) add(ev channels.Health) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evs = append(h.evs, ev)
}

func (h *healthLog) states() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var s []string
	for _, ev := range h.evs {
		s = append(s, ev.State)
	}
	return strings.Join(s, ",")
}

// When the server goes away the channel reports it down, reconnects
// within the backoff once the server is back, and receives what arrived
// meanwhile, once.
func TestReconnectsAfterServerRestart(t *testing.T) {
	s := startServer(t)
	b := newInbox()
	ch := newChannel(t, s.config())
	hl := &healthLog{}
	ch.ReportHealth(hl.add)
	run(t, ch, b.deliver)
	first := s.send(t, alice, "one", "first")
	b.next(t)
	waitFor(t, "the first message seen", func() bool { return s.d.Seen(t, bot, first) })
	s.d.Stop()
	waitFor(t, "down reported", func() bool { return hl.states() == "down" })
	s.d.Resume(t)
	second := s.send(t, alice, "two", "second")
	if in := b.next(t); in.PlatformID != second {
		t.Fatalf("after the restart delivered %+v", in)
	}
	waitFor(t, "up reported", func() bool { return hl.states() == "down,up" })
	b.none(t, 300*time.Millisecond)
}

// A server that accepts the connection and then says nothing (no
// greeting, no TLS handshake) is a stall, reported within the command
// timeout, in every TLS mode.
func TestSilentServerIsAStall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	for _, mode := range []string{TLSPlain, TLSStart, TLSImplicit} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{IMAPAddr: l.Addr().String(), SMTPAddr: l.Addr().String(), Username: bot, Password: "x", Mailbox: "INBOX",
				IMAPTLS: mode, SMTPTLS: TLSPlain, PollInterval: time.Second, IdleRefresh: time.Second,
				CommandTimeout: 300 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
			ch := newChannel(t, cfg)
			hl := &healthLog{}
			ch.ReportHealth(hl.add)
			run(t, ch, newInbox().deliver)
			waitFor(t, "a stall reported", func() bool { return strings.HasPrefix(hl.states(), "stalled") })
			// A silent submission server fails the send instead of
			// holding the reply.
			cfg.SMTPTLS = mode
			if _, err := newChannel(t, cfg).SendText(t.Context(), alice, "hello?"); err == nil {
				t.Error("a send to a silent server succeeded")
			}
		})
	}
}

// A reply sent by a process that did not receive the message (omega
// restarted mid-turn) still joins the sender's latest thread, found in
// the mailbox.
func TestReplyAfterRestartFindsTheThread(t *testing.T) {
	s := startServer(t)
	first := newChannel(t, s.config())
	b := newInbox()
	run(t, first, b.deliver)
	id := s.send(t, alice, "Dinner", "table for two?")
	b.next(t)
	fresh := newChannel(t, s.config())
	if _, err := fresh.SendText(t.Context(), alice, "Booked."); err != nil {
		t.Fatal(err)
	}
	msgs := s.d.Messages(t, alice)
	if len(msgs) != 1 || msgs[0].InReplyTo != id || msgs[0].Subject != "Re: Dinner" {
		t.Fatalf("alice got %+v", msgs)
	}
	// Someone who never wrote gets a message of its own.
	if _, err := fresh.SendText(t.Context(), "stranger@example.test", "Hello"); err != nil {
		t.Fatal(err)
	}
	got := s.d.Messages(t, "stranger@example.test")
	if len(got) != 1 || got[0].Subject != newSubject || got[0].InReplyTo != "" {
		t.Fatalf("the stranger got %+v", got)
	}
}

// A refused password is retried every few minutes, not every few
// seconds, and the channel is reported down with the server's answer.
func TestRefusedPasswordRetriesSlowly(t *testing.T) {
	s := startServer(t)
	cfg := s.config()
	cfg.Password = "wrong"
	waits := make(chan time.Duration, 10)
	ch, err := New(cfg, quiet, WithSleep(func(ctx context.Context, d time.Duration) error {
		waits <- d
		<-ctx.Done()
		return ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	hl := &healthLog{}
	ch.ReportHealth(hl.add)
	run(t, ch, newInbox().deliver)
	select {
	case d := <-waits:
		if d != authRetry {
			t.Fatalf("waits %s after a refused login, want %s", d, authRetry)
		}
	case <-time.After(patience):
		t.Fatal("no retry scheduled")
	}
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if len(hl.evs) != 1 || hl.evs[0].State != channels.HealthDown || !strings.Contains(hl.evs[0].Err, "AUTHENTICATIONFAILED") {
		t.Fatalf("health %+v", hl.evs)
	}
}
