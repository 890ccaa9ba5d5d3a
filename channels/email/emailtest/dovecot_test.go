package emailtest

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/omega-gateway/omega/internal/freeport"
)

// The kit's own check: a message submitted to Dovecot's submission
// service lands in the recipient's Maildir through the relay and LMTP,
// and a relay refusal reaches the client.
func TestSubmissionDeliversToDovecot(t *testing.T) {
	d := StartDovecotWith(t, Options{Submission: true}, "bot@example.test", "alice@example.test")
	raw := "From: alice@example.test\r\nTo: bot@example.test\r\nSubject: hi\r\nMessage-ID: <m1@example.test>\r\n\r\nhello\r\n"
	if err := submit(d.SubmissionAddr, "alice@example.test", "bot@example.test", raw); err != nil {
		t.Fatalf("submit: %v\n%s", err, d.Log())
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(d.Mailbox(t, "bot@example.test")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := d.Messages(t, "bot@example.test")
	if len(got) != 1 || !strings.Contains(got[0].Plain, "hello") || d.Relay.Accepted() != 1 {
		t.Fatalf("bot's mailbox: %+v\n%s", got, d.Log())
	}
	d.Relay.RefuseNext("RCPT", 550, "no such user")
	err := submit(d.SubmissionAddr, "alice@example.test", "bot@example.test", raw)
	if err == nil || !strings.Contains(err.Error(), "550") {
		t.Fatalf("refused submission returned %v", err)
	}
}

func submit(addr, from, to, raw string) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", from, Password)); err != nil {
		return err
	}
	return c.SendMail(from, []string{to}, strings.NewReader(raw))
}

// A port another process takes between its choice and Dovecot's bind
// costs a second start on fresh ports, not the test.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var calls int
	choose := func(t testing.TB, n int) []string {
		calls++
		addrs := freeport.Addrs(t, n)
		if calls == 1 {
			addrs[1] = taken.Addr().String()
		}
		return addrs
	}
	d := startDovecot(t, Options{}, choose, "bot@example.test")
	if calls != 2 {
		t.Fatalf("ports chosen %d times, want 2 (the first set had a taken port)", calls)
	}
	if d.LMTPAddr == taken.Addr().String() {
		t.Fatalf("LMTP on the taken port %s", d.LMTPAddr)
	}
	d.Deliver(t, "alice@example.test", []string{"bot@example.test"}, []byte("Subject: hi\r\n\r\nhello\r\n"))
	if got := d.Messages(t, "bot@example.test"); len(got) != 1 {
		t.Fatalf("bot's mailbox after the retried start: %+v\n%s", got, d.Log())
	}
}
