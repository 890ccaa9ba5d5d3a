package email

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/omega-gateway/omega/channels"
)

// session runs one IMAP connection until it fails or ctx ends: it hands
// every unseen message to deliver, then waits for more.
func (c *Channel) session(ctx context.Context, deliver channels.Deliver) error {
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	stop := context.AfterFunc(ctx, func() { _ = s.cl.Close() })
	defer stop()
	c.health.OK()
	c.log.Info("email receiving", "imap", c.cfg.IMAPAddr, "mailbox", c.cfg.Mailbox, "idle", s.cl.Caps().Has(imap.CapIdle))
	for ctx.Err() == nil {
		err := c.drain(ctx, s, deliver)
		if errors.Is(err, errDeliver) {
			// omega, not the mail server, failed: the session stays,
			// and the message, still unseen, is offered again shortly.
			c.log.Error("email: message left unseen, offered again", "err", err)
			if c.sleep(ctx, max(c.cfg.BackoffMax, time.Second)) != nil {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := s.waitNew(ctx, c.cfg.IdleRefresh, c.cfg.PollInterval); err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// drain delivers the unseen messages in UID (arrival) order, marking
// each \Seen once deliver recorded it; it stops at the first message
// deliver fails to record, so none is passed over.
func (c *Channel) drain(ctx context.Context, s *conn, deliver channels.Deliver) error {
	uids, err := s.unseen()
	if err != nil {
		return err
	}
	for _, uid := range uids {
		if err := c.receive(ctx, s, uid, deliver); err != nil {
			return err
		}
	}
	return nil
}

// errDeliver wraps a pipeline failure: the message stays unseen.
var errDeliver = errors.New("pipeline did not record the message")

func (c *Channel) receive(ctx context.Context, s *conn, uid imap.UID, deliver channels.Deliver) error {
	raw, err := s.fetch(uid)
	if err != nil {
		return err
	}
	msg, err := parse(raw)
	switch {
	case err != nil:
		// An unreadable message would be fetched forever: record why in
		// the log and move past it.
		c.log.Warn("email: unreadable message skipped (marked seen)", "uid", uid, "err", err)
		return s.markSeen(uid)
	case msg.skip != "":
		c.log.Info("email: message not for the pipeline (marked seen)", "uid", uid, "from", msg.from, "why", msg.skip)
		return s.markSeen(uid)
	case msg.from == normalize(c.cfg.FromAddress()):
		c.log.Info("email: own message skipped (marked seen)", "uid", uid)
		return s.markSeen(uid)
	case !slices.Contains(c.cfg.AllowedAddresses, msg.from):
		// A sender's address is easily forged and the pipeline answers a
		// denied sender: mail from off the allowlist is left read and
		// unanswered, so omega never mails strangers (backscatter).
		c.log.Warn("email: sender not on OMEGA_EMAIL_ALLOWED_ADDRESSES, not answered (marked seen)", "uid", uid, "from", msg.from)
		return s.markSeen(uid)
	}
	in := msg.incoming(c.now())
	if in.PlatformID == "" {
		in.PlatformID = fmt.Sprintf("uid:%d:%d", s.uidValidity, uid)
	}
	c.threads.remember(msg.from, msg.thread)
	if err := deliver(ctx, in); err != nil {
		return fmt.Errorf("%w: uid %d: %w", errDeliver, uid, err)
	}
	return s.markSeen(uid)
}
