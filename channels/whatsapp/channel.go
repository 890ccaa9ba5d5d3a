package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp/wadevice"
	"github.com/omega-gateway/omega/channels/whatsapp/waformat"
	"github.com/omega-gateway/omega/channels/whatsapp/wapreview"
	"github.com/omega-gateway/omega/internal/wait"
)

const (
	// Name is the channel name of WhatsApp messages.
	Name = "whatsapp"
	// formatHint follows the platform hint of the original gateway.
	formatHint = "Platform: WhatsApp. Avoid markdown tables and headers — use bold (*text*) and bullet lists instead."
	// maxCaption is where WhatsApp starts truncating image captions.
	maxCaption = 1024
	seenSize   = 4096
)

// Channel is the WhatsApp channel. It is linked to one WhatsApp account as a
// companion device, like WhatsApp Web.
type Channel struct {
	cfg    Config
	log    *slog.Logger
	client client
	seen   *seenSet

	// OnLoggedOut is called when WhatsApp unlinks the device (the owner
	// removed it, or the session expired); the pipeline tells the owner.
	// The channel keeps running and resumes once a device is paired
	// again. Set it before Start.
	OnLoggedOut func(reason string)

	minBackoff, maxBackoff time.Duration
	sendRetryEvery         time.Duration
	conn                   chan connEvent // connection state changes, from the event handler
	health                 *channels.HealthTracker

	now   func() time.Time
	after func(d time.Duration, f func()) (stop func() bool)

	previews *wapreview.Previews

	mu      sync.Mutex
	runCtx  context.Context
	deliver channels.Deliver
	cancel  context.CancelFunc
	done    chan struct{}
}

type connKind int

const (
	connUp connKind = iota
	connDown
	connLoggedOut
	connPaired
	connStalled
)

// Reconnect waits double from minReconnectWait up to maxReconnectWait, so
// the channel is connected again within 5 s of WhatsApp answering; one
// attempt per 5 s during an outage costs nothing.
const (
	minReconnectWait = time.Second
	maxReconnectWait = 5 * time.Second
)

// stalledPings is how many unanswered keepalive pings in a row (20-30 s
// apart in whatsmeow) make the channel drop the socket and dial again:
// whatsmeow's own forced reconnect is off with its auto-reconnect.
const stalledPings = 2

type connEvent struct {
	kind   connKind
	reason string
}

var (
	_ channels.Channel      = (*Channel)(nil)
	_ channels.FormatHinter = (*Channel)(nil)
	_ PairingSource         = (*Channel)(nil)

	_ channels.HealthReporter = (*Channel)(nil)
	_ channels.Previewer      = (*Channel)(nil)
)

// New creates the channel for the device stored in container (a fresh,
// unpaired device when there is none yet).
func New(ctx context.Context, cfg Config, container *sqlstore.Container, logger *slog.Logger) (*Channel, error) {
	cl, err := wadevice.Open(ctx, container, logger)
	if err != nil {
		return nil, err
	}
	return newWithClient(cfg, cl, logger), nil
}

func newWithClient(cfg Config, cl client, logger *slog.Logger, opts ...Option) *Channel {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Channel{
		cfg:        cfg,
		log:        logger.With("channel", Name),
		client:     cl,
		seen:       newSeenSet(seenSize),
		minBackoff: minReconnectWait,
		maxBackoff: maxReconnectWait,

		sendRetryEvery: sendRetryEvery,
		conn:           make(chan connEvent, 16),
		now:            time.Now,
		after:          func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
	}
	for _, opt := range opts {
		opt(c)
	}
	previews, err := wapreview.New(wapreview.Config{
		Client: cl, Log: c.log, Now: c.now, After: c.after, Sent: c.seen.Add, SendError: sendError,
	})
	if err != nil {
		// Only a nil client or a nil option gets here: a programming error.
		panic("whatsapp: " + err.Error())
	}
	c.previews = previews
	c.health = channels.NewHealthTracker(Name, c.log, nil)
	cl.AddEventHandler(c.handleEvent)
	return c
}

// Name implements channels.Channel.
func (c *Channel) Name() string { return Name }

// ReportHealth implements channels.HealthReporter: f learns when the
// connection stops receiving (dropped, replaced, refused, banned, logged
// out, keepalive unanswered) and when it is back.
func (c *Channel) ReportHealth(f channels.HealthFunc) { c.health.SetFunc(f) }

// ReceivesImages implements channels.ImageReceiver: photos people send
// reach the model as attachments.
func (c *Channel) ReceivesImages() bool { return true }

// FormatHint implements channels.FormatHinter.
func (c *Channel) FormatHint() string { return formatHint }

// Paired reports whether a WhatsApp account is linked.
func (c *Channel) Paired() bool {
	pn, _ := c.client.OwnJIDs()
	return !pn.IsEmpty()
}

// Start connects and receives messages until ctx ends or Stop is called.
// Without a paired device it waits for one to be paired (see Pair) rather
// than failing, so the other channels keep working.
func (c *Channel) Start(ctx context.Context, deliver channels.Deliver) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	c.mu.Lock()
	if c.cancel != nil {
		c.mu.Unlock()
		return errors.New("whatsapp: already started")
	}
	c.runCtx, c.deliver, c.cancel, c.done = ctx, deliver, cancel, done
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.deliver, c.cancel = nil, nil
		c.mu.Unlock()
	}()
	defer c.client.Disconnect()

	needPair := !c.Paired()
	for {
		if needPair {
			c.log.Warn("whatsapp: no device paired; run `omega whatsapp pair` or ask omega for a WhatsApp QR code")
			if !c.waitPaired(ctx) {
				return nil
			}
		}
		reason, loggedOut := c.runConnected(ctx)
		if !loggedOut {
			return nil
		}
		c.log.Error("whatsapp: logged out by WhatsApp; pair again to resume", "reason", reason)
		if c.OnLoggedOut != nil {
			c.OnLoggedOut(reason)
		}
		// The device keys are gone (whatsmeow deletes them); reconnecting
		// would only fail again.
		needPair = true
	}
}

// Stop ends Start and waits for it to return.
func (c *Channel) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel == nil {
		c.client.Disconnect()
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("whatsapp: stop: %w", ctx.Err())
	}
}

func (c *Channel) waitPaired(ctx context.Context) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case ev := <-c.conn:
			if ev.kind == connPaired {
				c.log.Info("whatsapp: device paired")
				return true
			}
		}
	}
}

// runConnected keeps the connection up, reconnecting with exponential
// backoff, until ctx ends (false) or WhatsApp logs the device out (true).
func (c *Channel) runConnected(ctx context.Context) (reason string, loggedOut bool) {
	backoff := c.minBackoff
	for {
		if err := c.client.Connect(); err != nil && !errors.Is(err, whatsmeow.ErrAlreadyConnected) {
			c.log.Warn("whatsapp: connect failed", "err", err, "retry_in", backoff)
			c.health.Failed(channels.HealthDown, "connect: "+err.Error())
		} else {
			reason, loggedOut, ended := c.waitDisconnect(ctx, &backoff)
			if ended {
				return reason, loggedOut
			}
			c.log.Warn("whatsapp: disconnected; reconnecting", "retry_in", backoff)
		}
		if wait.Sleep(ctx, backoff) != nil {
			return "", false
		}
		backoff = min(2*backoff, c.maxBackoff)
	}
}

// waitDisconnect waits while connected. ended is true when Start must stop
// reconnecting (ctx ended or logged out). A successful login resets backoff.
func (c *Channel) waitDisconnect(ctx context.Context, backoff *time.Duration) (reason string, loggedOut, ended bool) {
	for {
		select {
		case <-ctx.Done():
			return "", false, true
		case ev := <-c.conn:
			switch ev.kind {
			case connUp:
				c.log.Info("whatsapp: connected")
				*backoff = c.minBackoff
			case connDown:
				return "", false, false
			case connStalled:
				c.client.Disconnect()
				return "", false, false
			case connLoggedOut:
				c.client.Disconnect()
				return ev.reason, true, true
			}
		}
	}
}

// handleEvent runs on whatsmeow's event goroutine, one event at a time.
func (c *Channel) handleEvent(evt any) bool {
	if e, ok := evt.(*events.Message); ok {
		return c.handleMessage(e)
	}
	c.handleConnEvent(evt)
	return true
}

// handleConnEvent turns whatsmeow's connection events into the connect
// loop's signals and the channel's receiving health.
func (c *Channel) handleConnEvent(evt any) {
	switch e := evt.(type) {
	case *events.Connected:
		c.health.OK()
		c.signal(connEvent{kind: connUp})
	case *events.KeepAliveRestored:
		c.health.OK()
	case *events.KeepAliveTimeout:
		// Pings go unanswered: the socket is open but nothing arrives.
		c.log.Warn("whatsapp: keepalive timeout", "errors", e.ErrorCount, "last_success", e.LastSuccess)
		c.health.Failed(channels.HealthStalled, fmt.Sprintf("keepalive unanswered %d times", e.ErrorCount))
		if e.ErrorCount >= stalledPings {
			c.signal(connEvent{kind: connStalled})
		}
	case *events.Disconnected:
		c.down("disconnected")
	case *events.LoggedOut:
		c.health.Failed(channels.HealthDown, "logged out: "+e.Reason.String())
		c.signal(connEvent{kind: connLoggedOut, reason: e.Reason.String()})
	case *events.PairSuccess:
		c.signal(connEvent{kind: connPaired})
	case *events.StreamReplaced:
		// whatsmeow treats these as final and emits no Disconnected; retry
		// with backoff rather than stay offline for good.
		c.log.Warn("whatsapp: session replaced by another client with the same keys")
		c.down("session replaced by another client")
	case *events.TemporaryBan:
		c.log.Error("whatsapp: temporarily banned", "ban", e.String())
		c.down("temporarily banned: " + e.String())
	case *events.ClientOutdated:
		c.log.Error("whatsapp: WhatsApp rejected this client version; update omega")
		c.down("client outdated")
	case *events.ConnectFailure:
		c.log.Warn("whatsapp: connect failure", "reason", e.Reason.String(), "message", e.Message)
		c.down("connect failure: " + e.Reason.String())
	}
}

// down reports the connection lost and has the connect loop reconnect.
func (c *Channel) down(reason string) {
	c.health.Failed(channels.HealthDown, reason)
	c.signal(connEvent{kind: connDown})
}

func (c *Channel) signal(ev connEvent) {
	select {
	case c.conn <- ev:
	default:
		c.log.Warn("whatsapp: connection event dropped (queue full)", "kind", ev.kind)
	}
}

func (c *Channel) delivery() (context.Context, channels.Deliver) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runCtx, c.deliver
}

// SendText implements channels.Channel.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	jid, err := c.target(chatID)
	if err != nil {
		return res, err
	}
	chunks := waformat.Messages(text)
	if len(chunks) == 0 {
		return res, fmt.Errorf("whatsapp: send to %s: empty message: %w", chatID, channels.ErrRejected)
	}
	return c.sendChunks(ctx, jid, chatID, chunks, res)
}

// SendTyping implements channels.Channel.
func (c *Channel) SendTyping(ctx context.Context, chatID string) error {
	jid, err := c.target(chatID)
	if err != nil {
		return err
	}
	if err := c.client.SendChatPresence(ctx, jid, types.ChatPresenceComposing, types.ChatPresenceMediaText); err != nil {
		return sendError(chatID, err)
	}
	return nil
}

// SendPhoto implements channels.Channel.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: the image is uploaded,
// then sent; a caption too long for WhatsApp follows as text.
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	var res channels.SendResult
	jid, err := c.target(chatID)
	if err != nil {
		return res, err
	}
	if len(photo.Data) == 0 {
		return res, fmt.Errorf("whatsapp: send photo to %s: empty image: %w", chatID, channels.ErrRejected)
	}
	mime := photo.MIME
	if mime == "" {
		mime = "image/jpeg"
	}
	up, err := c.client.Upload(ctx, photo.Data, whatsmeow.MediaImage)
	if err != nil {
		return res, sendError(chatID, fmt.Errorf("upload: %w", err))
	}
	caption = waformat.ToWhatsApp(caption)
	longCaption := utf8.RuneCountInString(caption) > maxCaption
	img := &waE2E.ImageMessage{
		URL:           proto.String(up.URL),
		DirectPath:    proto.String(up.DirectPath),
		MediaKey:      up.MediaKey,
		FileEncSHA256: up.FileEncSHA256,
		FileSHA256:    up.FileSHA256,
		FileLength:    proto.Uint64(up.FileLength),
		Mimetype:      proto.String(mime),
	}
	if caption != "" && !longCaption {
		img.Caption = proto.String(caption)
	}
	resp, err := c.sendMessage(ctx, jid, &waE2E.Message{ImageMessage: img})
	if err != nil {
		return res, sendError(chatID, err)
	}
	c.seen.Add(resp.ID)
	res.PlatformIDs, res.Chunks = []string{resp.ID}, 1
	if longCaption {
		more, err := c.SendText(ctx, chatID, caption)
		if err != nil {
			return res, fmt.Errorf("whatsapp: photo caption: %w", err)
		}
		res.PlatformIDs = append(res.PlatformIDs, more.PlatformIDs...)
		res.Chunks += more.Chunks
	}
	return res, nil
}

// target parses chatID and checks that the channel can send right now.
func (c *Channel) target(chatID string) (types.JID, error) {
	jid, err := parseChat(chatID)
	if err != nil {
		return jid, fmt.Errorf("whatsapp: chat %q: %w: %w", chatID, channels.ErrRejected, err)
	}
	if !c.client.IsLoggedIn() {
		return jid, fmt.Errorf("whatsapp: send to %s: %w", chatID, channels.ErrNotConnected)
	}
	return jid, nil
}

// parseChat accepts a JID ("15551234567@s.whatsapp.net", "...@g.us") or a
// bare phone number, which is how the owner is usually configured.
func parseChat(chatID string) (types.JID, error) {
	if chatID == "" {
		return types.EmptyJID, errors.New("empty chat id")
	}
	if !strings.Contains(chatID, "@") {
		n := NormalizePhone(chatID)
		if n == "" {
			return types.EmptyJID, errors.New("not a JID or phone number")
		}
		return types.NewJID(n, types.DefaultUserServer), nil
	}
	jid, err := types.ParseJID(chatID)
	if err != nil {
		return jid, fmt.Errorf("parse jid: %w", err)
	}
	switch jid.Server {
	case types.DefaultUserServer, types.HiddenUserServer, types.GroupServer:
	default:
		return jid, fmt.Errorf("unsupported chat server %q", jid.Server)
	}
	if jid.User == "" {
		return jid, errors.New("jid without user")
	}
	return jid.ToNonAD(), nil
}

// sendError classifies a whatsmeow send failure for the pipeline's retry
// policy.
func sendError(chatID string, err error) error {
	switch {
	case errors.Is(err, whatsmeow.ErrNotConnected), errors.Is(err, whatsmeow.ErrNotLoggedIn),
		errors.Is(err, whatsmeow.ErrIQDisconnected):
		return fmt.Errorf("whatsapp: send to %s: %w: %w", chatID, channels.ErrNotConnected, err)
	case errors.Is(err, whatsmeow.ErrUnknownServer), errors.Is(err, whatsmeow.ErrRecipientADJID),
		errors.Is(err, whatsmeow.ErrBroadcastListUnsupported), errors.Is(err, whatsmeow.ErrInvalidImageFormat):
		return fmt.Errorf("whatsapp: send to %s: %w: %w", chatID, channels.ErrRejected, err)
	default:
		return fmt.Errorf("whatsapp: send to %s: %w", chatID, err)
	}
}
