// Package telegram is the Telegram channel: long polling for updates and
// sending replies through the Bot API, using github.com/mymmrac/telego.
package telegram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mymmrac/telego"
	ta "github.com/mymmrac/telego/telegoapi"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/botapi"
	"github.com/omega-gateway/omega/channels/telegram/tgpreview"
	"github.com/omega-gateway/omega/channels/telegram/transcribe"
	"github.com/omega-gateway/omega/internal/wait"
)

// Name is the channel name used in channels.Incoming.Channel.
const Name = "telegram"

const (
	defaultPollTimeout = 30 * time.Second
	defaultStallGrace  = 5 * time.Second
	defaultBackoffMax  = 5 * time.Second
	sendTimeout        = 60 * time.Second
	downloadTimeout    = 2 * time.Minute
)

var (
	_ channels.Channel        = (*Channel)(nil)
	_ channels.FormatHinter   = (*Channel)(nil)
	_ channels.HealthReporter = (*Channel)(nil)
	_ channels.Previewer      = (*Channel)(nil)
)

// Channel is the Telegram channel.
type Channel struct {
	cfg         Config
	log         *slog.Logger
	bot         *telego.Bot
	caller      ta.Caller
	http        *http.Client
	sleep       func(ctx context.Context, d time.Duration) error
	now         func() time.Time
	pollTimeout time.Duration
	stallGrace  time.Duration
	backoffMax  time.Duration
	pacer       *botapi.Pacer
	transcriber *transcribe.Client
	menus       []Menu // set by setMyCommands after getMe
	after       func(d time.Duration, f func()) (stop func() bool)
	previews    *tgpreview.Previews

	mu       sync.Mutex
	botID    int64
	username string
	cancel   context.CancelFunc
	done     chan struct{}
	stopped  bool // Stop was called; a later Start returns at once
	health   *channels.HealthTracker
}

// Option customises a Channel, mostly for tests.
type Option func(*Channel)

// WithHTTPClient sets the HTTP client used for the Bot API, file
// downloads and transcription.
func WithHTTPClient(client *http.Client) Option {
	return func(c *Channel) { c.http = client }
}

// WithSleep replaces the function used to wait (backoff, retry_after,
// pacing), so tests need not wait in real time. It must return ctx.Err()
// when ctx ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Channel) { c.sleep = sleep }
}

// WithClock replaces the clock the pacer reads, so tests can pace in
// fake time together with WithSleep.
func WithClock(now func() time.Time) Option {
	return func(c *Channel) { c.now = now }
}

// WithTimer replaces the timer that flushes a reply preview's latest
// text when no further update comes, so tests can fire it in fake time
// together with WithClock. after runs f once d has passed; stop cancels
// it and reports whether it had not run yet.
func WithTimer(after func(d time.Duration, f func()) (stop func() bool)) Option {
	return func(c *Channel) { c.after = after }
}

func realAfter(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// WithPollTimeout sets getUpdates' long-poll timeout (default 30 s,
// rounded down to whole seconds, at least 1 s).
func WithPollTimeout(d time.Duration) Option {
	return func(c *Channel) { c.pollTimeout = wholeSeconds(d) }
}

// wholeSeconds is d rounded down to whole seconds, at least 1 s: the Bot
// API takes the poll timeout in seconds.
func wholeSeconds(d time.Duration) time.Duration { return max(d.Truncate(time.Second), time.Second) }

// ReportHealth implements channels.HealthReporter.
func (c *Channel) ReportHealth(f channels.HealthFunc) {
	c.health.SetFunc(f)
}

// New creates the channel. It does not contact Telegram; Start does.
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Channel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.GroupMode == "" {
		cfg.GroupMode = GroupModeMention
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.telegram.org"
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if cfg.TranscribeModel == "" {
		cfg.TranscribeModel = "whisper-1"
	}
	if logger == nil {
		logger = slog.Default()
	}
	c := &Channel{
		cfg:         cfg,
		log:         logger.With("channel", Name),
		http:        &http.Client{},
		sleep:       wait.Sleep,
		now:         time.Now,
		pollTimeout: wholeSeconds(cmp.Or(cfg.PollTimeout, defaultPollTimeout)),
		stallGrace:  cmp.Or(cfg.StallGrace, defaultStallGrace),
		backoffMax:  cmp.Or(cfg.BackoffMax, defaultBackoffMax),
		pacer:       botapi.NewPacer(),
		after:       realAfter,
	}
	for _, opt := range opts {
		opt(c)
	}
	c.health = channels.NewHealthTracker(Name, c.log, c.now)
	c.caller = ta.HTTPCaller{Client: c.http}
	bot, err := telego.NewBot(cfg.Token,
		telego.WithAPIServer(cfg.APIURL),
		telego.WithAPICaller(c.caller),
		telego.WithDiscardLogger(),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: create bot: %w", err)
	}
	c.bot = bot
	c.previews, err = tgpreview.New(tgpreview.Config{
		Bot: bot, Pacer: c.pacer, Log: c.log, Now: c.now, After: c.after, Redact: c.redact, Classify: c.classify,
	})
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	if cfg.TranscribeURL != "" {
		if c.transcriber, err = transcribe.New(cfg.TranscribeURL, cfg.TranscribeAPIKey, cfg.TranscribeModel, c.http); err != nil {
			return nil, fmt.Errorf("telegram: %w", err)
		}
	}
	return c, nil
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// BotUsername is the bot's username without "@", known once Start has
// called getMe; empty before.
func (c *Channel) BotUsername() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.username
}

// ReceivesImages implements channels.ImageReceiver: photos people send
// reach the model as attachments.
func (c *Channel) ReceivesImages() bool { return true }

// FormatHint implements channels.FormatHinter.
func (c *Channel) FormatHint() string { return formatHint }

const formatHint = "Platform: Telegram. Rendered: **bold**, *italic*, ~~strikethrough~~, `inline code`, " +
	"fenced code blocks with a language, and [links](https://example.com). " +
	"Headings become bold lines and lists become plain bullet lines; tables and images " +
	"in Markdown do not render, so use lists instead. Long replies are split into several messages."

// Start implements channels.Channel: it learns the bot's identity, then
// long-polls until ctx ends or Stop is called.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		cancel()
		return nil
	}
	if c.cancel != nil {
		c.mu.Unlock()
		cancel()
		return errors.New("telegram: already started")
	}
	c.cancel, c.done = cancel, done
	c.mu.Unlock()
	defer close(done)
	defer cancel()

	if err := c.identify(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if len(c.menus) > 0 {
		// Beside polling: a slow API must not delay messages.
		registered := make(chan struct{})
		go func() { defer close(registered); c.registerCommands(ctx) }()
		defer func() { cancel(); <-registered }()
	}
	c.poll(ctx, deliver)
	return nil
}

// Stop implements channels.Channel: it ends polling and waits for Start
// to return, or for ctx to end. A channel is not restarted after Stop.
func (c *Channel) Stop(ctx context.Context) error {
	c.mu.Lock()
	c.stopped = true
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("telegram: stop: %w", ctx.Err())
	}
}

// identify calls getMe, retrying transient failures; an unauthorised
// token is fatal.
func (c *Channel) identify(ctx context.Context) error {
	b := c.newBackoff()
	for {
		callCtx, cancel := context.WithTimeout(ctx, sendTimeout)
		me, err := c.bot.GetMe(callCtx)
		cancel()
		if err == nil {
			c.mu.Lock()
			c.botID, c.username = me.ID, me.Username
			c.mu.Unlock()
			c.log.Info("telegram bot identified", "username", me.Username)
			return nil
		}
		var apiErr *ta.Error
		if errors.As(err, &apiErr) && (apiErr.ErrorCode == http.StatusUnauthorized || apiErr.ErrorCode == http.StatusNotFound) {
			return fmt.Errorf("telegram: getMe: token rejected: %w", apiErr)
		}
		wait := b.next()
		c.log.Warn("telegram getMe failed, retrying", "err", c.redact(err), "backoff", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (c *Channel) identity() (int64, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID, c.username
}

// redact removes the bot token from errors: telego's transport errors
// carry the request URL, which contains it.
func (c *Channel) redact(err error) error {
	if err == nil || !strings.Contains(err.Error(), c.cfg.Token) {
		return err
	}
	return redactedError{err: err, token: c.cfg.Token}
}

type redactedError struct {
	err   error
	token string
}

func (e redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.token, "<token>")
}

func (e redactedError) Unwrap() error { return e.err }

// backoff doubles from 1 s up to its cap (TELEGRAM_BACKOFF_MAX): the cap
// bounds how long after the Bot API answers again polling resumes.
type backoff struct{ cur, max time.Duration }

const backoffMin = time.Second

func (c *Channel) newBackoff() *backoff { return &backoff{max: c.backoffMax} }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = min(backoffMin, b.max)
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }
