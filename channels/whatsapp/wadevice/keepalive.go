package wadevice

import (
	"time"

	"go.mau.fi/whatsmeow"
)

// pingDeadline is how long a keepalive ping may go unanswered before
// whatsmeow reports KeepAliveTimeout (its default is 10 s). Pings go out
// every 20-30 s, so a stalled socket is noticed within that keep-alive
// plus 5 s; 5 s is ample for a ping's answer, and one slow answer only
// marks the channel stalled until the next ping succeeds.
const pingDeadline = 5 * time.Second

// whatsmeow reads the deadline from a package variable, its documented
// setting, in every client's keepalive loop; it is set before any client
// can exist, so no loop reads it while it changes.
func init() { whatsmeow.KeepAliveResponseDeadline = pingDeadline }
