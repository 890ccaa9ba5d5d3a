package email

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// conn is one IMAP session on the mailbox.
type conn struct {
	cl      *imapclient.Client
	timeout time.Duration
	// uidValidity with a UID names a message without a Message-ID.
	uidValidity uint32
	// notify is signalled when the server announces new messages.
	notify chan struct{}
}

// dialIMAP connects, logs in and selects the mailbox, each step bounded
// by the command timeout.
func (c *Channel) dialIMAP(ctx context.Context) (*conn, error) {
	notify := make(chan struct{}, 1)
	opts := &imapclient.Options{
		TLSConfig: c.tlsConfig(c.cfg.IMAPAddr),
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(data *imapclient.UnilateralDataMailbox) {
				if data.NumMessages != nil {
					signal(notify)
				}
			},
		},
	}
	cl, err := c.greet(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.cfg.IMAPAddr, err)
	}
	s := &conn{cl: cl, timeout: c.cfg.CommandTimeout, notify: notify}
	stop := context.AfterFunc(ctx, func() { _ = cl.Close() })
	defer stop()
	if err := s.within(func() error { return cl.Login(c.cfg.Username, c.cfg.Password).Wait() }); err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("login as %s: %w", c.cfg.Username, err)
	}
	if err := s.within(func() error {
		data, err := cl.Select(c.cfg.Mailbox, nil).Wait()
		if err == nil {
			s.uidValidity = data.UIDValidity
		}
		return err
	}); err != nil {
		_ = cl.Close()
		return nil, fmt.Errorf("select %s: %w", c.cfg.Mailbox, err)
	}
	return s, nil
}

// greet connects in the configured TLS mode and waits for the server's
// greeting, the TLS handshake and STARTTLS all within the command
// timeout: a server that accepts the connection and says nothing is a
// stall, not a hang.
func (c *Channel) greet(ctx context.Context, opts *imapclient.Options) (*imapclient.Client, error) {
	d := &net.Dialer{Timeout: c.cfg.CommandTimeout}
	raw, err := d.DialContext(ctx, "tcp", c.cfg.IMAPAddr)
	if err != nil {
		return nil, err
	}
	// The client sets its own read deadlines, so the bound is a timer
	// that closes the connection.
	timer := time.AfterFunc(c.cfg.CommandTimeout, func() { _ = raw.Close() })
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	defer stop()
	var cl *imapclient.Client
	switch c.cfg.IMAPTLS {
	case TLSImplicit:
		cl = imapclient.New(tls.Client(raw, opts.TLSConfig), opts)
	case TLSStart:
		cl, err = imapclient.NewStartTLS(raw, opts)
	default:
		cl = imapclient.New(raw, opts)
	}
	if err == nil {
		err = cl.WaitGreeting()
	}
	if !timer.Stop() {
		_ = raw.Close()
		return nil, fmt.Errorf("%w: no greeting within %s", errStalled, c.cfg.CommandTimeout)
	}
	if err != nil {
		_ = raw.Close()
		return nil, err
	}
	return cl, nil
}

func (c *Channel) tlsConfig(addr string) *tls.Config {
	if c.tls != nil {
		return c.tls.Clone()
	}
	host, _, _ := net.SplitHostPort(addr)
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}

// within runs f, closing the connection (which fails f) when the server
// leaves it unanswered past the timeout.
func (s *conn) within(f func() error) error {
	timer := time.AfterFunc(s.timeout, func() { _ = s.cl.Close() })
	err := f()
	if !timer.Stop() {
		return fmt.Errorf("%w for %s", errStalled, s.timeout)
	}
	return err
}

// unseen lists the UIDs of the messages not yet marked \Seen.
func (s *conn) unseen() ([]imap.UID, error) {
	var uids []imap.UID
	err := s.within(func() error {
		data, err := s.cl.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
		if err != nil {
			return err
		}
		uids = data.AllUIDs()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search unseen: %w", err)
	}
	return uids, nil
}

// fetch returns a message's raw bytes without setting \Seen.
func (s *conn) fetch(uid imap.UID) ([]byte, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	var raw []byte
	err := s.within(func() error {
		msgs, err := s.cl.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 1 {
			raw = msgs[0].FindBodySection(section)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch uid %d: %w", uid, err)
	}
	return raw, nil
}

// markSeen sets \Seen on a message.
func (s *conn) markSeen(uid imap.UID) error {
	flags := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
	if err := s.within(func() error { return s.cl.Store(imap.UIDSetNum(uid), flags, nil).Close() }); err != nil {
		return fmt.Errorf("mark uid %d seen: %w", uid, err)
	}
	return nil
}

// waitNew returns when the server may have new messages: it announced
// them during IDLE, the IDLE refresh came (the connection is then
// checked), or, without IDLE, the poll interval passed.
func (s *conn) waitNew(ctx context.Context, idleRefresh, poll time.Duration) error {
	if !s.cl.Caps().Has(imap.CapIdle) {
		s.sleep(ctx, poll)
		return s.within(func() error { return s.cl.Noop().Wait() })
	}
	var idle *imapclient.IdleCommand
	if err := s.within(func() (err error) { idle, err = s.cl.Idle(); return err }); err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	s.sleep(ctx, idleRefresh)
	if err := s.within(func() error {
		if err := idle.Close(); err != nil {
			return err
		}
		return idle.Wait()
	}); err != nil {
		return fmt.Errorf("end idle: %w", err)
	}
	return nil
}

// sleep waits for d, a new-mail notice, the connection's end or ctx's.
func (s *conn) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.notify:
	case <-s.cl.Closed():
	case <-ctx.Done():
	}
}

func (s *conn) close() {
	_ = s.within(func() error { return s.cl.Logout().Wait() })
	_ = s.cl.Close()
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
