package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/channelset"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/email"
	"github.com/omega-gateway/omega/channels/email/emailtest"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
)

const (
	mailBot      = "omega@example.test"
	mailAlice    = "alice@example.test"
	mailStranger = "mallory@example.test"
)

// The email channel as `omega serve` builds it from its settings (the
// registry's descriptor), against a real Dovecot (IMAP, and its SMTP
// submission service relaying through an MTA double to LMTP): an allowlisted sender is answered in her thread, a stranger is
// not answered at all, and a restart that finds an answered message
// unseen again does not answer it twice.
func TestEmailEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			d := emailtest.StartDovecotWith(t, emailtest.Options{Submission: true}, mailBot, mailAlice, mailStranger)
			claude, _ := fakeClaude(t)
			vars := baseVars(t, b, claude)
			for k, v := range map[string]string{
				"OMEGA_HTTP_ADDR": "", "OMEGA_PAIRING_ENABLED": "false",
				"OMEGA_EMAIL_IMAP_ADDR": d.IMAPAddr, "OMEGA_EMAIL_SMTP_ADDR": d.SubmissionAddr,
				"OMEGA_EMAIL_USERNAME": mailBot, "OMEGA_EMAIL_PASSWORD": emailtest.Password,
				"OMEGA_EMAIL_IMAP_TLS": "plain", "OMEGA_EMAIL_SMTP_TLS": "plain",
				"OMEGA_EMAIL_ALLOWED_ADDRESSES": "Alice@Example.test", "OMEGA_EMAIL_BACKOFF_MAX": "200ms",
			} {
				vars[k] = v
			}
			mb := &mailbox{d: d}
			n := startServedNode(t, vars)

			first := mb.send(t, mailAlice, "Weekend", "hello omega")
			evs := n.waitTurn(t, mailTurnID(first))
			if got := payload[turn.TurnCompleted](t, n, evs).Status; got != turn.StatusOK {
				t.Fatalf("status %s: %s", got, eventTypes(evs))
			}
			reply := mb.replyTo(t, mailAlice, first)
			if reply.Subject != "Re: Weekend" || reply.References != first || !strings.Contains(reply.Plain, "hello omega") {
				t.Fatalf("reply %+v", reply)
			}
			waitFor(t, "the message marked seen", func() bool { return d.Seen(t, mailBot, first) })

			// A stranger's mail is left read and unanswered: no turn, no
			// denial mailed to an address anyone can forge.
			stranger := mb.send(t, mailStranger, "Hi", "who are you")
			waitFor(t, "the stranger's message marked seen", func() bool { return d.Seen(t, mailBot, stranger) })
			if evs := n.events(t, mailTurnID(stranger)); len(evs) != 0 {
				t.Fatalf("the stranger's mail became a turn: %s", eventTypes(evs))
			}
			if got := d.Messages(t, mailStranger); len(got) != 0 {
				t.Fatalf("the stranger was answered: %+v", got)
			}

			// The process stops; the answered message is unseen again, as
			// if it had stopped before flagging it.
			answered := len(d.Messages(t, mailAlice))
			n.stop()
			d.Unsee(t, mailBot, first)
			n2 := startServedNode(t, vars)
			waitFor(t, "the new process to flag the old message", func() bool { return d.Seen(t, mailBot, first) })
			next := mb.send(t, mailAlice, "Re: Weekend", "and after the restart?", "In-Reply-To: "+reply.MessageID)
			n2.waitTurn(t, mailTurnID(next))
			if evs := n2.events(t, mailTurnID(first)); countType(evs, "MessageReceived") != 1 || countType(evs, "ReplySent") != 1 {
				t.Fatalf("the old message was answered again: %s", eventTypes(evs))
			}
			after := d.Messages(t, mailAlice)[answered:]
			if len(after) != 1 || after[0].InReplyTo != next || !strings.Contains(after[0].Plain, "after the restart") {
				t.Fatalf("after the restart alice got %+v", after)
			}
			mailOutage(t, n2, d, mb)
		})
	}
}

// The mail server going away is recorded on channel-email and named by
// the readiness check until omega is logged in again; mail that arrived
// meanwhile is answered.
func mailOutage(t *testing.T, n *tgNode, d *emailtest.Dovecot, mb *mailbox) {
	stream := system.ChannelStream(email.Name)
	recorded := func() string {
		evs, err := n.rt.Store.Load(context.Background(), stream, 1)
		if err != nil {
			t.Fatal(err)
		}
		return eventTypes(evs)
	}
	d.Stop()
	waitFor(t, "ChannelDown on "+stream, func() bool { return recorded() == "ChannelDown" })
	if got := n.rt.UnhealthyChannels(); !slices.Equal(got, []string{"email: down"}) {
		t.Fatalf("unhealthy %q while the server is away", got)
	}
	d.Resume(t)
	id := mb.send(t, mailAlice, "Back?", "are you back")
	n.waitTurn(t, mailTurnID(id))
	mb.replyTo(t, mailAlice, id)
	waitFor(t, "ChannelRecovered on "+stream, func() bool { return recorded() == "ChannelDown ChannelRecovered" })
	if got := n.rt.UnhealthyChannels(); len(got) != 0 {
		t.Fatalf("unhealthy %q after reconnecting", got)
	}
}

func mailTurnID(messageID string) string {
	return intake.TurnID(channels.Incoming{Channel: email.Name, PlatformID: messageID})
}

// mailbox sends test mail into the bot's mailbox.
type mailbox struct {
	d   *emailtest.Dovecot
	mu  sync.Mutex
	seq int
}

func (m *mailbox) send(t *testing.T, from, subject, body string, extra ...string) string {
	t.Helper()
	m.mu.Lock()
	m.seq++
	id := fmt.Sprintf("<e2e-%d-%s>", m.seq, strings.ReplaceAll(t.Name(), "/", "-")+"@example.test")
	m.mu.Unlock()
	m.d.Deliver(t, from, []string{mailBot}, emailtest.Compose(from, mailBot, id, subject, body, extra...))
	return id
}

// replyTo waits for the message in user's mailbox that answers id.
func (m *mailbox) replyTo(t *testing.T, user, id string) emailtest.Message {
	t.Helper()
	var found emailtest.Message
	waitFor(t, "a reply to "+id, func() bool {
		for _, msg := range m.d.Messages(t, user) {
			if msg.InReplyTo == id && strings.Contains(msg.Plain, "echo") {
				found = msg
				return true
			}
		}
		return false
	})
	return found
}

// startServedNode runs omega with the channels its configuration turns
// on, built as `omega serve` builds them.
func startServedNode(t *testing.T, vars map[string]string) *tgNode {
	t.Helper()
	cfg := loadConfig(t, vars)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := channelset.New(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := a.NewRuntime(ctx, set.RuntimeOptions())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := rt.Run(ctx); err != nil {
			t.Errorf("runtime: %v", err)
		}
	}()
	n := &tgNode{rt: rt}
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			a.Close()
		})
	}
	t.Cleanup(n.stop)
	return n
}

// Over email, an image the provider draws goes out attached to a message
// of its own, once, its Message-ID on record; a photo the person attached
// reaches the turn's inbox (the provider's copy of it is recognised as
// theirs and not mailed back).
func TestEmailImagesBothWays(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			d := emailtest.StartDovecotWith(t, emailtest.Options{Submission: true}, mailBot, mailAlice)
			vars := baseVars(t, b, drawingClaude(t))
			for k, v := range map[string]string{
				"OMEGA_HTTP_ADDR": "", "OMEGA_EMAIL_IMAP_ADDR": d.IMAPAddr, "OMEGA_EMAIL_SMTP_ADDR": d.SubmissionAddr,
				"OMEGA_EMAIL_USERNAME": mailBot, "OMEGA_EMAIL_PASSWORD": emailtest.Password,
				"OMEGA_EMAIL_IMAP_TLS": "plain", "OMEGA_EMAIL_SMTP_TLS": "plain", "OMEGA_EMAIL_ALLOWED_ADDRESSES": mailAlice,
			} {
				vars[k] = v
			}
			mb := &mailbox{d: d}
			n := startServedNode(t, vars)

			draw := mb.send(t, mailAlice, "Chart", "please DRAW a chart")
			evs := n.waitTurn(t, mailTurnID(draw))
			var images []emailtest.Message
			waitFor(t, "the chart mailed", func() bool {
				images = nil
				for _, m := range d.Messages(t, mailAlice) {
					if len(m.Files) > 0 {
						images = append(images, m)
					}
				}
				return len(images) == 1
			})
			img := images[0]
			if f := img.Files[0]; f.Name != "chart.png" || f.MIME != "image/png" || string(f.Data) != chartPNG || img.InReplyTo != draw {
				t.Fatalf("image message %+v", img)
			}
			if rec := payload[turn.WorkspaceImageSent](t, n, evs); rec.Path != "chart.png" || len(rec.PlatformIDs) != 1 || rec.PlatformIDs[0] != img.MessageID {
				t.Fatalf("WorkspaceImageSent %+v, image message %s", rec, img.MessageID)
			}

			photo := "\xff\xd8\xff\xe0 alice's photo"
			raw := "From: " + mailAlice + "\r\nTo: " + mailBot + "\r\nSubject: Re: Chart\r\nMessage-ID: <photo-" + b.name + "@example.test>\r\n" +
				"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
				"--B\r\nContent-Type: text/plain\r\n\r\nCOPY it\r\n" +
				"--B\r\nContent-Type: image/jpeg\r\nContent-Disposition: attachment; filename=me.jpg\r\n\r\n" + photo + "\r\n--B--\r\n"
			d.Deliver(t, mailAlice, []string{mailBot}, []byte(raw))
			evs = n.waitTurn(t, mailTurnID("<photo-"+b.name+"@example.test>"))
			found := payload[turn.WorkspaceImagesFound](t, n, evs)
			if len(found.Images) != 0 || len(found.Skipped) != 1 || found.Skipped[0].Path != "copy.jpg" || found.Skipped[0].Reason != turn.ImageSkipInbound {
				t.Fatalf("found %+v, want copy.jpg skipped as alice's own", found)
			}
		})
	}
}
