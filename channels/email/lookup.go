package email

import (
	"context"
	"slices"

	"github.com/emersion/go-imap/v2"
)

// lastFrom finds the thread of the latest message from addr in the
// mailbox, for a reply whose thread this process does not know (it was
// received before a restart). It reports false when there is none or
// the server cannot be asked: the reply then starts a new subject.
func (c *Channel) lastFrom(ctx context.Context, addr string) (thread, bool) {
	s, err := c.dialIMAP(ctx)
	if err != nil {
		c.log.Warn("email: cannot look up the thread to answer in", "to", addr, "err", err)
		return thread{}, false
	}
	defer s.close()
	var uids []imap.UID
	err = s.within(func() error {
		data, err := s.cl.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "From", Value: addr}}}, nil).Wait()
		if err == nil {
			uids = data.AllUIDs()
		}
		return err
	})
	if err != nil || len(uids) == 0 {
		return thread{}, false
	}
	raw, err := s.fetch(slices.Max(uids))
	if err != nil {
		return thread{}, false
	}
	msg, err := parse(raw)
	if err != nil || msg.from != normalize(addr) {
		return thread{}, false
	}
	c.threads.remember(addr, msg.thread)
	return msg.thread, true
}
