package emailtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Submission is an SMTP submission double: it takes AUTH PLAIN from the
// Dovecot users and hands each accepted message to Dovecot's LMTP for its
// recipients, the way a mail server's MTA would.
type Submission struct {
	Addr string
	d    *Dovecot
	srv  *smtp.Server

	mu       sync.Mutex
	refuse   *smtp.SMTPError
	refuseAt string
	accepted int
}

// StartSubmission serves SMTP on a loopback port (plain, no TLS) until
// the test ends.
func StartSubmission(t *testing.T, d *Dovecot) *Submission {
	t.Helper()
	s := &Submission{d: d}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
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
	s      *Submission
	user   string
	from   string
	to     []string
	authed bool
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if password != Password {
			return errors.New("invalid credentials")
		}
		ss.user, ss.authed = username, true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	if !strings.EqualFold(from, ss.user) {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "sender address not owned by " + ss.user}
	}
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
