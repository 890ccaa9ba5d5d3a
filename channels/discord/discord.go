// Package discord is omega's Discord channel: a bot on Discord's gateway
// (through discordgo) that takes direct messages and, in guild channels,
// the messages that mention or reply to it, and answers over the REST
// API in Discord's Markdown, cut at 2,000 characters. It reconnects and
// resumes on its own, with a short backoff, and notices a gateway that
// stopped answering within the heartbeat interval plus a grace.
package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/internal/wait"
)

// Name is the channel's name in sender ids and targets ("discord:<user id>").
const Name = "discord"

// formatHint tells the model how its replies are shown.
const formatHint = "Replies are shown in Discord, which renders Markdown: **bold**, *italic*, ~~strike~~, `code`, ``` code blocks, > quotes, lists and [links](url); no tables (they become code blocks) and no headings. Messages over 2,000 characters are split."

// intents are the gateway events the bot asks for: messages in guilds
// and DMs, with their content (a privileged intent to switch on in the
// Developer Portal).
const intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// Channel is the Discord channel.
type Channel struct {
	cfg    Config
	log    *slog.Logger
	sess   *discordgo.Session
	watch  *stallWatch
	sleep  func(ctx context.Context, d time.Duration) error
	health *channels.HealthTracker
	dms    *dmChannels
	seen   lastSeen
	cursor *cursors

	disconnected chan struct{}

	mu    sync.Mutex
	botID string
	run   channels.Run
}

// Option changes how a Channel works, for tests.
type Option func(*Channel)

// WithSleep replaces the wait between reconnections and delivery retries.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = f }
}

// withCursors keeps the channels' cursors in omega's database.
func withCursors(cur *cursors) Option { return func(c *Channel) { c.cursor = cur } }

// New validates cfg and makes the channel; it connects to nothing.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.GroupMode == "" {
		cfg.GroupMode = GroupModeMention
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Channel{cfg: cfg, log: logger.With("channel", Name), sleep: wait.Sleep, watch: &stallWatch{grace: cfg.StallGrace},
		disconnected: make(chan struct{}, 1)}
	for _, o := range opts {
		o(c)
	}
	sess, err := newSession(cfg, c.watch)
	if err != nil {
		return nil, err
	}
	c.sess = sess
	c.dms = newDMChannels(sess)
	c.health = channels.NewHealthTracker(Name, c.log, nil)
	c.watch.onStall = func() {
		c.health.Failed(channels.HealthStalled, fmt.Sprintf("the gateway sent nothing for its heartbeat interval plus %s", cfg.StallGrace))
	}
	sess.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		select {
		case c.disconnected <- struct{}{}:
		default:
		}
	})
	return c, nil
}

// newSession is a discordgo session that talks to cfg.APIURL, reconnects
// only when the channel says so (discordgo's own loop backs off to ten
// minutes) and hands events over in order.
func newSession(cfg Config, watch *stallWatch) (*discordgo.Session, error) {
	base, err := url.Parse(cfg.APIURL)
	if err != nil {
		return nil, fmt.Errorf("discord: DISCORD_API_URL: %w", err)
	}
	sess, err := discordgo.New("Bot " + cfg.Token)
	if err != nil {
		return nil, fmt.Errorf("discord: session: %w", err)
	}
	sess.Client = newHTTPClient(base, cfg.RequestTimeout)
	sess.Dialer = watch.dialer()
	sess.ShouldReconnectOnError = false
	sess.SyncEvents = true
	sess.StateEnabled = false
	// discordgo logs through the standard logger; the channel logs every
	// failure it sees with slog instead.
	sess.LogLevel = -1
	sess.Identify.Intents = intents
	return sess, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// FormatHint implements channels.FormatHinter.
func (c *Channel) FormatHint() string { return formatHint }

// ReceivesImages implements channels.ImageReceiver.
func (c *Channel) ReceivesImages() bool { return true }

// ReportHealth implements channels.HealthReporter.
func (c *Channel) ReportHealth(f channels.HealthFunc) { c.health.SetFunc(f) }

func (c *Channel) setBotID(u *discordgo.User) {
	if u == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.botID = u.ID
}

func (c *Channel) botUser() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID
}

// Start implements channels.Channel: it keeps a gateway session open,
// resuming it whenever the connection ends, until ctx ends or Stop is
// called. Messages reach deliver one at a time, in the order Discord
// sent them.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, end, ok := c.run.Begin(ctx)
	if !ok {
		return nil
	}
	defer end()

	queue := make(chan *discordgo.Message, 256)
	remove := c.sess.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
		c.seen.see(m.ChannelID, m.ID)
		select {
		case queue <- m.Message:
		case <-ctx.Done():
		}
	})
	resumeFrom := c.loadCursors(ctx)
	var sessions atomic.Int32
	removeReady := c.sess.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		c.setBotID(r.User)
		if sessions.Add(1) > 1 || resumeFrom {
			go c.catchUp(ctx, queue)
		}
	})
	defer removeReady()
	var wg sync.WaitGroup
	wg.Go(func() { c.deliverAll(ctx, queue, deliver) })
	unblock := context.AfterFunc(ctx, c.watch.closeAll)
	defer unblock()
	c.connect(ctx)
	remove()
	if err := c.sess.Close(); err != nil {
		c.log.Debug("discord: close", "err", err)
	}
	wg.Wait()
	return nil
}

// loadCursors seeds the channels seen with the stored cursors and
// reports whether there are any to read back from.
func (c *Channel) loadCursors(ctx context.Context) bool {
	stored, err := c.cursor.load(ctx)
	if err != nil {
		c.log.Error("discord: messages sent while omega was down will not be read back", "err", err)
		return false
	}
	for ch, id := range stored {
		c.seen.see(ch, id)
	}
	return len(stored) > 0
}

// connect opens the gateway session and opens it again each time it
// ends: at once after a working connection dropped (the session
// resumes), else after a backoff capped at DISCORD_BACKOFF_MAX.
func (c *Channel) connect(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		c.watch.stalled.Store(false)
		err := c.sess.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			backoff = 0
			c.health.OK()
			select {
			case <-ctx.Done():
				return
			case <-c.disconnected:
			}
			c.log.Info("discord gateway connection ended, resuming", "stalled", c.watch.stalled.Load())
			continue
		}
		backoff = min(max(2*backoff, time.Second), c.cfg.BackoffMax)
		if c.sleep(ctx, c.failed(err, backoff)) != nil {
			return
		}
	}
}

// failed records a failed connection attempt and returns the wait before
// the next: backoff, or refusedRetry when Discord refused the bot.
func (c *Channel) failed(err error, backoff time.Duration) time.Duration {
	if why, ok := refused(err); ok {
		failures := c.health.Failed(channels.HealthDown, why)
		c.log.Error("discord refused the bot; retrying in "+refusedRetry.String(), "err", why, "failed_attempts", failures)
		return refusedRetry
	}
	state := channels.HealthDown
	if c.watch.stalled.Load() {
		state = channels.HealthStalled
	}
	failures := c.health.Failed(state, err.Error())
	c.log.Warn("discord gateway connection failed", "err", err, "failed_attempts", failures, "retry_in", backoff)
	return backoff
}

// Stop implements channels.Channel.
func (c *Channel) Stop(ctx context.Context) error { return c.run.Stop(ctx, Name) }
