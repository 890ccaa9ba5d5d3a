// Package signal is omega's Signal channel, through a signal-cli daemon
// the user runs (`signal-cli -a +NUMBER daemon --http 127.0.0.1:8080`):
// it reads the daemon's event stream (server-sent events, resumed after
// the last event omega recorded) and sends through its JSON-RPC
// endpoint.
package signal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/internal/wait"
)

// Channel is the Signal channel.
type Channel struct {
	cfg   Config
	log   *slog.Logger
	rpc   *rpcClient
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time

	health *channels.HealthTracker

	mu     sync.Mutex
	lastID string // the last event recorded (or skipped) this run
	run    channels.Run
}

// Option changes how a Channel works, for tests.
type Option func(*Channel)

// WithSleep replaces the wait between reconnections and retries.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = f }
}

// rpcTimeout bounds one JSON-RPC call; a send with attachments included.
const rpcTimeout = 60 * time.Second

// New validates cfg and makes the channel; it connects to nothing.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Channel{cfg: cfg, log: logger.With("channel", Name), sleep: wait.Sleep, now: time.Now,
		rpc: &rpcClient{base: cfg.base(), http: &http.Client{Timeout: rpcTimeout}}}
	for _, o := range opts {
		o(c)
	}
	c.health = channels.NewHealthTracker(Name, c.log, c.now)
	return c, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// FormatHint implements channels.FormatHinter.
func (c *Channel) FormatHint() string { return formatHint }

// ReceivesImages implements channels.ImageReceiver.
func (c *Channel) ReceivesImages() bool { return true }

// ReportHealth implements channels.HealthReporter.
func (c *Channel) ReportHealth(f channels.HealthFunc) { c.health.SetFunc(f) }

// Start implements channels.Channel: it keeps the event stream open,
// reconnecting with backoff whenever it fails, until ctx ends or Stop is
// called.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, end, ok := c.run.Begin(ctx)
	if !ok {
		return nil
	}
	defer end()

	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		err := c.stream(ctx, deliver)
		if ctx.Err() != nil {
			return nil
		}
		pause := min(backoff, c.cfg.BackoffMax)
		if errors.Is(err, errDeliver) {
			// omega, not the daemon, failed: the stream resumes after
			// the last event recorded, so the message comes again.
			c.log.Error("signal: message not recorded, asking the daemon for it again", "err", err)
			pause = max(c.cfg.BackoffMax, time.Second)
		} else {
			if c.health.Up() {
				backoff = 250 * time.Millisecond
			}
			failures := c.health.Failed(streamState(err), err.Error())
			c.log.Warn("signal event stream ended", "err", err, "failed_attempts", failures)
			backoff *= 2
		}
		if c.sleep(ctx, pause) != nil {
			return nil
		}
	}
	return nil
}

// Stop implements channels.Channel.
func (c *Channel) Stop(ctx context.Context) error { return c.run.Stop(ctx, Name) }

func streamState(err error) string {
	if errors.Is(err, errStalled) {
		return channels.HealthStalled
	}
	return channels.HealthDown
}
