package emailtest

import (
	"strings"
	"testing"
	"time"
)

// The kit's own check: a message submitted over SMTP lands in the
// recipient's Maildir through Dovecot's LMTP.
func TestSubmissionDeliversToDovecot(t *testing.T) {
	d := StartDovecot(t, "bot@example.test", "alice@example.test")
	s := StartSubmission(t, d)
	raw := "From: alice@example.test\r\nTo: bot@example.test\r\nSubject: hi\r\nMessage-ID: <m1@example.test>\r\n\r\nhello\r\n"
	if err := sendPlain(s.Addr, "alice@example.test", "bot@example.test", raw); err != nil {
		t.Fatalf("submit: %v\n%s", err, d.Log())
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(d.Mailbox(t, "bot@example.test")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := d.Mailbox(t, "bot@example.test")
	if len(got) != 1 || !strings.Contains(string(got[0]), "hello") {
		t.Fatalf("bot's mailbox: %q\n%s", got, d.Log())
	}
}
