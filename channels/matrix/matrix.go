// Package matrix is omega's Matrix channel: it long-polls the
// homeserver's /sync as one bot account, joins the rooms allowlisted
// people invite it to (and refuses everyone else's invites), hands each
// message to the pipeline (in rooms with more than two members only when
// it is mentioned), keeps its sync position in omega's database, and
// answers with HTML-formatted messages and uploaded images.
//
// End-to-end encryption is not supported (it needs Olm/Megolm sessions,
// device keys and key backup, which mautrix's crypto brings with libolm
// over cgo, and omega builds without cgo): an encrypted message is
// answered with a notice saying so.
package matrix

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
	"github.com/omega-gateway/omega/internal/wait"
)

// Name is the channel's name in sender ids and targets ("matrix:<room>").
const Name = "matrix"

// Channel is the Matrix channel.
type Channel struct {
	cfg    Config
	log    *slog.Logger
	cli    *mxapi.Client
	tokens tokens
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time
	health *channels.HealthTracker
	rooms  *rooms
	// previews are the chats' live previews.
	previews channels.LivePreviews[*preview]

	run channels.Run
}

// Option changes how a Channel works, for tests.
type Option func(*Channel)

// WithSleep replaces the wait between failed syncs.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = f }
}

// New validates cfg and makes the channel; it connects to nothing. The
// sync position is kept in store (nil: in memory only).
func New(cfg Config, logger *slog.Logger, store tokens, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Every request carries its own deadline; retries and backoff are the
	// channel's, so that each failure is seen and counted.
	cli := mxapi.New(cfg.Homeserver, cfg.UserID, cfg.AccessToken)
	if store == nil {
		store = &memTokens{next: map[string]string{}}
	}
	c := &Channel{cfg: cfg, log: logger.With("channel", Name), cli: cli, tokens: store,
		sleep: wait.Sleep, now: time.Now, rooms: newRooms()}
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

// Start implements channels.Channel: it syncs until ctx ends or Stop is
// called, retrying failed syncs with backoff.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, end, ok := c.run.Begin(ctx)
	if !ok {
		return nil
	}
	defer end()

	since, err := c.tokens.load(ctx, c.cfg.UserID)
	if err != nil {
		// Without its position the channel would replay or skip: it
		// stays down, visibly, rather than guess.
		c.health.Failed(channels.HealthDown, err.Error())
		c.log.Error("matrix: sync position unreadable, not receiving", "err", err)
		<-ctx.Done()
		return nil
	}
	c.loop(ctx, since, deliver)
	return nil
}

// loop runs syncs from since until ctx ends.
func (c *Channel) loop(ctx context.Context, since string, deliver channels.Deliver) {
	backoff := backoffMin
	for ctx.Err() == nil {
		next, err := c.syncOnce(ctx, since, deliver)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			since, backoff = next, backoffMin
			continue
		}
		pause := min(backoff, c.cfg.BackoffMax)
		if errors.Is(err, errStalled) {
			// The attempt itself waited out its deadline.
			pause = 0
		}
		if !errors.Is(err, errDeliver) {
			failures := c.health.Failed(syncState(err), err.Error())
			c.log.Warn("matrix sync failed", "err", err, "homeserver", c.cfg.Homeserver, "failed_attempts", failures)
			pause = max(pause, retryAfter(err))
		} else {
			c.log.Error("matrix: batch not recorded, offered again", "err", err)
		}
		if c.sleep(ctx, pause) != nil {
			return
		}
		backoff *= 2
	}
}

const backoffMin = 250 * time.Millisecond

// Stop implements channels.Channel.
func (c *Channel) Stop(ctx context.Context) error { return c.run.Stop(ctx, Name) }

// allowed reports whether user is on MATRIX_ALLOWED_USERS.
func (c *Channel) allowed(user string) bool {
	return slices.Contains(c.cfg.AllowedUsers, user)
}
