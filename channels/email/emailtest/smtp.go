package emailtest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// Submission is the MTA double behind Dovecot's submission service: it
// takes what Dovecot relays and hands each message to Dovecot's LMTP for
// its recipients, as a mail server's MTA would; it can refuse a message
// as an MTA does.
type Submission struct {
	Addr string
	d    *Dovecot
	srv  *smtp.Server

	mu       sync.Mutex
	refuse   *smtp.SMTPError
	refuseAt string
	accepted int
}

// startRelay serves SMTP on a loopback port (plain, no TLS) until the
// test ends.
func startRelay(t *testing.T, d *Dovecot) *Submission {
	t.Helper()
	s := &Submission{d: d}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.srv.Domain = "localhost"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// RefuseNext makes the next command of the stage ("RCPT" or "DATA") fail
// with the SMTP code and message.
func (s *Submission) RefuseNext(stage string, code int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseAt = stage
	s.refuse = &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: message}
}

// Accepted counts the messages delivered so far.
func (s *Submission) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

func (s *Submission) refused(stage string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse == nil || s.refuseAt != stage {
		return nil
	}
	err := s.refuse
	s.refuse = nil
	return err
}

type session struct {
	s    *Submission
	from string
	to   []string
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.s.refused("RCPT"); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := ss.s.refused("DATA"); err != nil {
		return err
	}
	if err := ss.s.d.deliver(ss.from, ss.to, raw); err != nil {
		return fmt.Errorf("relay to lmtp: %w", err)
	}
	ss.s.mu.Lock()
	ss.s.accepted++
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }
