// Package pairing links WhatsApp from another channel: the pairing QR
// codes go as images to the owner's chat, each step an event.
package pairing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

// Source starts WhatsApp pairing sessions; *whatsapp.Channel is the real
// one.
type Source interface {
	// QRCodes yields rotating codes and ends with a Done event. The session
	// lives as long as ctx.
	QRCodes(ctx context.Context) (<-chan channels.QREvent, error)
}

// ErrPairingInProgress: a pairing session is already running; its codes
// are on their way.
var ErrPairingInProgress = errors.New("whatsapp pairing already in progress")

const (
	defaultPairingSession = 5 * time.Minute
	// noticeTimeout bounds the final message and record of a session,
	// which run after the session's own context may have ended.
	noticeTimeout = 30 * time.Second
)

// WhatsAppQR links WhatsApp from another channel: it sends the pairing QR
// codes as images to the owner's chat (usually Telegram), the way the
// /whatsapp command and the WHATSAPP_QR marker ask for. Every step is an
// event on the whatsapp-pairing stream.
type WhatsAppQR struct {
	source   Source
	channels ChannelSet
	store    eventstore.Store
	senders  Profiles
	session  time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	running bool
	wg      sync.WaitGroup
}

// ChannelSet finds the channel the codes go to.
type ChannelSet interface {
	Channel(name string) (channels.Channel, bool)
}

// Profiles gives a chat's language (private chats: the chat id is the
// sender id).
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error)
}

// Deps are a WhatsAppQR's collaborators.
type Deps struct {
	Source   Source
	Channels ChannelSet
	Store    eventstore.Store
	// Senders, when set, gives the chat's language; otherwise texts are
	// in English.
	Senders Profiles
	// Session bounds a whole pairing session (default 5 minutes; WhatsApp
	// itself stops rotating codes after about 3).
	Session time.Duration
	Logger  *slog.Logger
}

// NewWhatsAppQR checks the dependencies and returns the pairing flow.
func NewWhatsAppQR(d Deps) (*WhatsAppQR, error) {
	if d.Source == nil || d.Channels == nil || d.Store == nil || d.Logger == nil {
		return nil, errors.New("pairing: whatsapp qr needs a source, channels, a store and a logger")
	}
	if d.Session <= 0 {
		d.Session = defaultPairingSession
	}
	return &WhatsAppQR{source: d.Source, channels: d.Channels, store: d.Store, senders: d.Senders, session: d.Session, log: d.Logger}, nil
}

// SendQR starts a pairing session and sends its first QR code as a PNG
// photo to chatID on channel. It returns once that code was delivered, or
// with the reason it could not be, so that a command can answer at once;
// the session then goes on in the background (bounded by Session): each
// new code as it rotates, then a "paired" or "timed out" message.
func (q *WhatsAppQR) SendQR(ctx context.Context, channel, chatID string) error {
	ch, ok := q.channels.Channel(channel)
	if !ok {
		return fmt.Errorf("whatsapp qr: channel %s is not running", channel)
	}
	if !q.acquire() {
		return ErrPairingInProgress
	}
	p := &pairing{q: q, ch: ch, channel: channel, chatID: chatID, id: uuid.NewString(), lang: q.language(ctx, channel, chatID)}
	p.log = q.log.With("session", p.id, "channel", channel, "chat", chatID)
	if err := p.record(ctx, system.WhatsAppPairingStarted{Session: p.id, Channel: channel, ChatID: chatID}); err != nil {
		q.release()
		return err
	}
	// The session outlives the request that started it: the phone is
	// scanned minutes later.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.session)
	events, err := q.source.QRCodes(sctx)
	if err != nil {
		cancel()
		q.release()
		return p.fail(system.PairingError, err)
	}
	// Until the first code is out, the caller may give up.
	first, stop := context.WithCancel(sctx)
	unhook := context.AfterFunc(ctx, stop)
	over, err := p.step(first, events)
	unhook()
	stop()
	if over {
		cancel()
		q.release()
		return err
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		defer q.release()
		defer cancel()
		for over := false; !over; {
			over, _ = p.step(sctx, events)
		}
	}()
	return nil
}

// Wait blocks until every background pairing session has ended.
func (q *WhatsAppQR) Wait() { q.wg.Wait() }

func (q *WhatsAppQR) acquire() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running {
		return false
	}
	q.running = true
	return true
}

func (q *WhatsAppQR) release() {
	q.mu.Lock()
	q.running = false
	q.mu.Unlock()
}

func (q *WhatsAppQR) language(ctx context.Context, channel, chatID string) string {
	if q.senders == nil {
		return i18n.Default
	}
	p, err := q.senders.Load(ctx, channel, chatID)
	if err != nil {
		q.log.Warn("whatsapp qr: sender language unknown, using the default", "channel", channel, "chat", chatID, "err", err)
		return i18n.Default
	}
	return i18n.OrDefault(p.Language)
}

// pairing is one session.
type pairing struct {
	q                   *WhatsAppQR
	ch                  channels.Channel
	channel, chatID, id string
	lang                string
	sent                int
	log                 *slog.Logger
}

// step waits for the next event and acts on it. over reports that the
// session ended; err says why, when it ended without a link.
func (p *pairing) step(ctx context.Context, events <-chan channels.QREvent) (over bool, err error) {
	var ev channels.QREvent
	var ok bool
	select {
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return true, p.fail(system.PairingTimeout, fmt.Errorf("no result within %s: %w", p.q.session, channels.ErrPairTimeout))
		}
		return true, p.fail(system.PairingCanceled, ctx.Err())
	case ev, ok = <-events:
	}
	switch {
	case !ok:
		return true, p.fail(system.PairingError, errors.New("pairing ended without a result"))
	case ev.Done && ev.Err == nil:
		return true, p.paired()
	case ev.Done && errors.Is(ev.Err, channels.ErrPairTimeout):
		return true, p.fail(system.PairingTimeout, ev.Err)
	case ev.Done:
		return true, p.fail(system.PairingError, ev.Err)
	}
	if err := p.sendCode(ctx, ev); err != nil {
		return true, err
	}
	return false, nil
}

func (p *pairing) sendCode(ctx context.Context, ev channels.QREvent) error {
	p.sent++
	rec := system.WhatsAppQRSent{Session: p.id, Index: p.sent, ValidForMs: ev.Timeout.Milliseconds()}
	png, err := channels.QRPNG(ev.Code)
	if err == nil {
		photo := channels.Attachment{Name: "whatsapp-qr.png", MIME: "image/png", Data: png}
		err = p.ch.SendPhoto(ctx, p.chatID, photo, i18n.Pairing(p.lang, i18n.PairingScan))
	}
	if err != nil {
		rec.Error = err.Error()
	}
	if rerr := p.record(ctx, rec); rerr != nil {
		p.log.Warn("whatsapp qr: could not record a sent code", "err", rerr)
	}
	if err != nil {
		// The chat cannot be reached: no point in sending more codes, nor
		// a text about it.
		p.log.Error("whatsapp qr: code not delivered; pairing stopped", "err", err)
		ctx, cancel := noticeContext(ctx)
		defer cancel()
		if rerr := p.record(ctx, system.WhatsAppPairingFailed{Session: p.id, Reason: system.PairingUndeliverable, Error: err.Error()}); rerr != nil {
			p.log.Warn("whatsapp qr: could not record the failure", "err", rerr)
		}
		return fmt.Errorf("whatsapp qr: send code %d: %w", p.sent, err)
	}
	p.log.Info("whatsapp qr: code sent", "index", p.sent)
	return nil
}

func (p *pairing) paired() error {
	ctx, cancel := noticeContext(context.Background())
	defer cancel()
	if err := p.record(ctx, system.WhatsAppPaired{Session: p.id}); err != nil {
		p.log.Warn("whatsapp qr: could not record the pairing", "err", err)
	}
	p.log.Info("whatsapp qr: paired")
	p.notify(ctx, i18n.Pairing(p.lang, i18n.PairingPaired))
	return nil
}

// fail records and announces a session that ended without a link, and
// returns cause wrapped.
func (p *pairing) fail(reason string, cause error) error {
	ctx, cancel := noticeContext(context.Background())
	defer cancel()
	if err := p.record(ctx, system.WhatsAppPairingFailed{Session: p.id, Reason: reason, Error: cause.Error()}); err != nil {
		p.log.Warn("whatsapp qr: could not record the failure", "err", err)
	}
	p.log.Warn("whatsapp qr: pairing ended without a link", "reason", reason, "err", cause)
	text := i18n.Pairing(p.lang, i18n.PairingFailed)
	if reason == system.PairingTimeout {
		text = i18n.Pairing(p.lang, i18n.PairingTimeout)
	}
	if reason != system.PairingCanceled {
		p.notify(ctx, text)
	}
	return fmt.Errorf("whatsapp qr: %s: %w", reason, cause)
}

func (p *pairing) notify(ctx context.Context, text string) {
	if _, err := p.ch.SendText(ctx, p.chatID, text); err != nil {
		p.log.Warn("whatsapp qr: notice not delivered", "err", err)
	}
}

func (p *pairing) record(ctx context.Context, payload domain.Payload) error {
	ev, err := domain.NewEventFrom(payload, domain.Metadata{CorrelationID: p.id, Channel: p.channel, Sender: p.chatID})
	if err != nil {
		return err
	}
	if _, err := p.q.store.Append(ctx, system.WhatsAppPairingStream, eventstore.Any, ev); err != nil {
		return fmt.Errorf("record %s: %w", payload.EventType(), err)
	}
	return nil
}

func noticeContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), noticeTimeout)
}
