// Package email is omega's email channel: it waits on one IMAP mailbox
// (IDLE, or polling where the server lacks it), hands each new message
// to the pipeline, marks it \Seen only once the pipeline recorded it,
// and answers over SMTP submission in the same thread, as plain text
// with an HTML alternative.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/internal/wait"
)

// Channel is the email channel.
type Channel struct {
	cfg     Config
	log     *slog.Logger
	tls     *tls.Config
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
	threads *threads

	health *channels.HealthTracker

	run channels.Run
}

// Option changes how a Channel works, for tests.
type Option func(*Channel)

// WithTLSConfig sets the TLS configuration of both connections (a test
// server's certificate pool).
func WithTLSConfig(cfg *tls.Config) Option { return func(c *Channel) { c.tls = cfg } }

// WithSleep replaces the wait between reconnections.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = f }
}

// New validates cfg and makes the channel; it connects to nothing.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Channel{cfg: cfg, log: logger.With("channel", Name), sleep: wait.Sleep, now: time.Now, threads: newThreads()}
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

// ReceivesImages implements channels.ImageReceiver: images arrive as
// attachments.
func (c *Channel) ReceivesImages() bool { return true }

// ReportHealth implements channels.HealthReporter.
func (c *Channel) ReportHealth(f channels.HealthFunc) {
	c.health.SetFunc(f)
}

// SendTyping implements channels.Channel: email shows no typing.
func (c *Channel) SendTyping(context.Context, string) error { return nil }

// Start implements channels.Channel: it keeps an IMAP session open on
// the mailbox, reconnecting with backoff whenever it fails, until ctx
// ends or Stop is called.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, end, ok := c.run.Begin(ctx)
	if !ok {
		return nil
	}
	defer end()

	backoff := time.Second
	for ctx.Err() == nil {
		err := c.session(ctx, deliver)
		if ctx.Err() != nil {
			return nil
		}
		if c.health.Up() {
			backoff = time.Second
		}
		failures := c.health.Failed(sessionState(err), err.Error())
		c.log.Warn("email session ended", "err", err, "imap", c.cfg.IMAPAddr, "failed_attempts", failures)
		pause := min(backoff, c.cfg.BackoffMax)
		if refusedLogin(err) {
			// Retrying a refused password every few seconds gets the
			// account locked by many providers; the outage is recorded and
			// alerted all the same.
			pause = authRetry
		}
		if c.sleep(ctx, pause) != nil {
			return nil
		}
		backoff *= 2
	}
	return nil
}

// Stop implements channels.Channel.
func (c *Channel) Stop(ctx context.Context) error { return c.run.Stop(ctx, Name) }

// errStalled: a command went unanswered past EMAIL_COMMAND_TIMEOUT.
var errStalled = errors.New("IMAP server stopped answering")

// authRetry is the wait after the server refused the credentials.
const authRetry = 5 * time.Minute

// refusedLogin reports whether the server refused the username or
// password (not a temporary failure of its authentication backend).
func refusedLogin(err error) bool {
	var ie *imap.Error
	return errors.As(err, &ie) && ie.Code == imap.ResponseCodeAuthenticationFailed
}

// sessionState is the health a failed session leaves the channel in:
// stalled when the server stopped answering, else down.
func sessionState(err error) string {
	if errors.Is(err, errStalled) {
		return channels.HealthStalled
	}
	return channels.HealthDown
}

func itoa(n int) string { return strconv.Itoa(n) }
