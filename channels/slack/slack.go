// Package slack is omega's Slack channel: it receives over Socket Mode
// (a WebSocket omega opens with the app-level token, so no public URL is
// needed), acknowledges each event only once the pipeline recorded it,
// and answers through the Web API with the bot token, in the thread the
// person wrote in.
package slack

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/internal/wait"
)

// Channel is the Slack channel.
type Channel struct {
	cfg   Config
	log   *slog.Logger
	api   *slack.Client
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time

	health   *channels.HealthTracker
	seen     *recent
	previews channels.LivePreviews[*preview]
	names    names

	mu    sync.Mutex
	botID string
	run   channels.Run
}

// Option changes how a Channel works, for tests.
type Option func(*Channel)

// WithSleep replaces the wait between reconnections and rate-limited
// retries.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = f }
}

// httpTimeout bounds one Web API call (a file up- or download included).
const httpTimeout = 60 * time.Second

// New validates cfg and makes the channel; it connects to nothing.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(cfg.apiURL()), slack.OptionAppLevelToken(cfg.AppToken),
		slack.OptionHTTPClient(&http.Client{Timeout: httpTimeout}))
	c := &Channel{cfg: cfg, log: logger.With("channel", Name), api: api, sleep: wait.Sleep, now: time.Now, seen: newRecent(1024)}
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

// ReceivesImages implements channels.ImageReceiver: files shared with
// the bot arrive as attachments.
func (c *Channel) ReceivesImages() bool { return true }

// ReportHealth implements channels.HealthReporter.
func (c *Channel) ReportHealth(f channels.HealthFunc) { c.health.SetFunc(f) }

// SendTyping implements channels.Channel: Slack shows no typing
// indicator for apps outside the legacy RTM API.
func (c *Channel) SendTyping(context.Context, string) error { return nil }

// Start implements channels.Channel: it keeps a Socket Mode connection
// open, reconnecting with backoff whenever it fails, until ctx ends or
// Stop is called.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, end, ok := c.run.Begin(ctx)
	if !ok {
		return nil
	}
	defer end()

	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		err := c.session(ctx, deliver)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errRefresh) {
			// Slack asked for a fresh connection: not a failure.
			c.log.Info("slack: reconnecting at Slack's request", "reason", err)
			continue
		}
		if c.health.Up() {
			backoff = 250 * time.Millisecond
		}
		failures := c.health.Failed(sessionState(err), err.Error())
		c.log.Warn("slack session ended", "err", err, "failed_attempts", failures)
		pause := min(backoff, c.cfg.BackoffMax)
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) {
			pause = max(pause, rl.RetryAfter)
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

// sessionState is the health a failed session leaves the channel in.
func sessionState(err error) string {
	if errors.Is(err, errStalled) {
		return channels.HealthStalled
	}
	return channels.HealthDown
}

// describe is an API error for people: Slack's error code, the HTTP
// status, or the transport failure.
func describe(err error) string {
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &se):
		return "Slack answered " + se.Err
	case errors.As(err, &sc):
		return "HTTP " + sc.Status
	case errors.As(err, &rl):
		return rl.Error()
	}
	return err.Error()
}
