package telegram

import (
	"errors"
	"net"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/botapi"
)

// sendOutageWait bounds how long a send waits for a Bot API it cannot
// connect to. Such a request never reached Telegram, so retrying it
// cannot duplicate a message, while giving up after the pipeline's few
// quick retries would lose the reply to any outage longer than seconds.
const sendOutageWait = 5 * time.Minute

// sendRetry decides whether a failed send is tried again, and after how
// long: flood control is waited out a bounded number of times, an
// unreachable API with the poller's capped backoff until sendOutageWait.
type sendRetry struct {
	floods int
	down   time.Duration
	b      *backoff
}

func (c *Channel) newSendRetry() *sendRetry { return &sendRetry{b: c.newBackoff()} }

// next returns the wait before the next attempt, why, and false when err
// is final.
func (r *sendRetry) next(err error) (time.Duration, string, bool) {
	if wait, limited := botapi.RetryAfter(err); limited {
		r.floods++
		return wait, "flood control", r.floods < maxSendAttempts
	}
	if unreachable(err) && r.down < sendOutageWait {
		wait := r.b.next()
		r.down += wait
		return wait, "Bot API unreachable", true
	}
	return 0, "", false
}

// unreachable reports whether err is a failure to connect, after which
// the request is known not to have been sent.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
