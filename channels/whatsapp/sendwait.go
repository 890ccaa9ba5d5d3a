package whatsapp

import (
	"context"
	"errors"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/omega-gateway/omega/internal/wait"
)

// While the socket is down a send is tried again every sendRetryEvery,
// for at most sendOutageWait. whatsmeow refuses it before anything
// leaves, so trying again cannot duplicate a message, and failing at
// once would lose the reply to any dropped connection.
const (
	sendRetryEvery = time.Second
	sendOutageWait = 5 * time.Minute
)

// sendMessage sends msg, waiting (bounded) for the connect loop to
// reconnect when whatsmeow is not connected. A channel that is not
// running has no loop to wait for and fails at once.
func (c *Channel) sendMessage(ctx context.Context, jid types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	every := c.sendRetryEvery
	for tries := time.Duration(0); ; tries++ {
		resp, err := c.client.SendMessage(ctx, jid, msg)
		if !errors.Is(err, whatsmeow.ErrNotConnected) || !c.running() || tries*every >= sendOutageWait {
			return resp, err
		}
		if tries == 0 {
			c.log.Warn("whatsapp: not connected; the message waits for the connection", "to", jid.User, "up_to", sendOutageWait)
		}
		if err := wait.Sleep(ctx, every); err != nil {
			return resp, err
		}
	}
}

func (c *Channel) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel != nil
}
