package emailtest

import (
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Unsee clears \Seen on user's message with the Message-ID, through
// IMAP, as a crash between recording a message and flagging it would
// leave it.
func (d *Dovecot) Unsee(t *testing.T, user, messageID string) {
	t.Helper()
	c, err := imapclient.DialInsecure(d.IMAPAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, Password).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: messageID}}}, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	uids := found.AllUIDs()
	if len(uids) != 1 {
		t.Fatalf("%d messages with Message-ID %s", len(uids), messageID)
	}
	flags := &imap.StoreFlags{Op: imap.StoreFlagsDel, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
	if err := c.Store(imap.UIDSetNum(uids...), flags, nil).Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.Logout().Wait()
}
