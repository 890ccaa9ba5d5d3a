package matrix

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
)

var (
	// errStalled: a sync went unanswered past its timeout plus the grace.
	errStalled = errors.New("homeserver stopped answering /sync")
	// errDeliver wraps a pipeline failure: the batch is synced again.
	errDeliver = errors.New("pipeline did not record the message")
)

// syncOnce runs one /sync from since, handles its batch and records the
// new position; it returns the position to sync from next. The position
// advances only once every message of the batch was recorded.
func (c *Channel) syncOnce(ctx context.Context, since string, deliver channels.Deliver) (string, error) {
	timeout := c.cfg.SyncTimeout
	if since == "" || !c.health.Up() {
		// The first sync returns at once (its history is not answered),
		// and so does each attempt while the homeserver is failing: a
		// stalled connection is then given up after StallGrace, not after
		// a whole long poll, so receiving resumes within StallGrace of
		// the homeserver answering again.
		timeout = 0
	}
	sctx, cancel := context.WithTimeout(ctx, timeout+c.cfg.StallGrace)
	defer cancel()
	resp, err := c.cli.Sync(sctx, since, timeout)
	if err != nil {
		if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("%w for %s", errStalled, timeout+c.cfg.StallGrace)
		}
		return "", fmt.Errorf("sync: %w", err)
	}
	c.health.OK()
	if err := c.handle(ctx, resp, since == "", deliver); err != nil {
		return "", err
	}
	if resp.NextBatch == "" || resp.NextBatch == since {
		return since, nil
	}
	if err := c.tokens.save(ctx, c.cfg.UserID, resp.NextBatch); err != nil {
		// The batch is recorded; replaying it after a restart is
		// harmless (each event id is a turn once), so receiving goes on.
		c.log.Error("matrix: sync position not saved", "err", err)
	}
	return resp.NextBatch, nil
}

// syncState is the health a failed sync leaves the channel in.
func syncState(err error) string {
	if errors.Is(err, errStalled) {
		return channels.HealthStalled
	}
	return channels.HealthDown
}

// retryAfter is the wait a 429 asks for, capped at a minute; zero for
// other failures.
func retryAfter(err error) time.Duration {
	var ae *mxapi.Error
	if !errors.As(err, &ae) {
		return 0
	}
	return min(ae.RetryAfter, time.Minute)
}
