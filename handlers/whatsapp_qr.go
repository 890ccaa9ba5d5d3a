package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/eventstore"
)

// PairingSource starts WhatsApp pairing sessions; *whatsapp.Channel is the
// real one.
type PairingSource interface {
	// QRCodes yields rotating codes and ends with a Done event. The session
	// lives as long as ctx.
	QRCodes(ctx context.Context) (<-chan whatsapp.QREvent, error)
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
	Source   PairingSource
	Channels ChannelSet
	Store    eventstore.Store
	// Senders, when set, gives the chat's language (private chats: the
	// chat id is the sender id); otherwise texts are in English.
	Senders *Senders
	// Session bounds a whole pairing session (default 5 minutes; WhatsApp
	// itself stops rotating codes after about 3).
	Session time.Duration
	Logger  *slog.Logger

	mu      sync.Mutex
	running bool
	wg      sync.WaitGroup
}

// SendQR starts a pairing session and sends its first QR code as a PNG
// photo to chatID on channel. It returns once that code was delivered, or
// with the reason it could not be, so that a command can answer at once;
// the session then goes on in the background (bounded by Session): each
// new code as it rotates, then a "paired" or "timed out" message.
func (q *WhatsAppQR) SendQR(ctx context.Context, channel, chatID string) error {
	ch, ok := q.Channels.Channel(channel)
	if !ok {
		return fmt.Errorf("whatsapp qr: channel %s is not running", channel)
	}
	if !q.acquire() {
		return ErrPairingInProgress
	}
	p := &pairing{q: q, ch: ch, channel: channel, chatID: chatID, id: uuid.NewString(), lang: q.language(ctx, channel, chatID)}
	p.log = q.logger().With("session", p.id, "channel", channel, "chat", chatID)
	if err := p.record(ctx, domain.WhatsAppPairingStarted{Session: p.id, Channel: channel, ChatID: chatID}); err != nil {
		q.release()
		return err
	}
	// The session outlives the request that started it: the phone is
	// scanned minutes later.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.session())
	events, err := q.Source.QRCodes(sctx)
	if err != nil {
		cancel()
		q.release()
		return p.fail(domain.PairingError, err)
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

func (q *WhatsAppQR) session() time.Duration {
	if q.Session > 0 {
		return q.Session
	}
	return defaultPairingSession
}

func (q *WhatsAppQR) logger() *slog.Logger {
	if q.Logger != nil {
		return q.Logger
	}
	return slog.Default()
}

func (q *WhatsAppQR) language(ctx context.Context, channel, chatID string) string {
	if q.Senders == nil {
		return i18n.Default
	}
	p, err := q.Senders.Load(ctx, channel, chatID)
	if err != nil {
		q.logger().Warn("whatsapp qr: sender language unknown, using the default", "channel", channel, "chat", chatID, "err", err)
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
func (p *pairing) step(ctx context.Context, events <-chan whatsapp.QREvent) (over bool, err error) {
	var ev whatsapp.QREvent
	var ok bool
	select {
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return true, p.fail(domain.PairingTimeout, fmt.Errorf("no result within %s: %w", p.q.session(), whatsapp.ErrPairTimeout))
		}
		return true, p.fail(domain.PairingCanceled, ctx.Err())
	case ev, ok = <-events:
	}
	switch {
	case !ok:
		return true, p.fail(domain.PairingError, errors.New("pairing ended without a result"))
	case ev.Done && ev.Err == nil:
		return true, p.paired()
	case ev.Done && errors.Is(ev.Err, whatsapp.ErrPairTimeout):
		return true, p.fail(domain.PairingTimeout, ev.Err)
	case ev.Done:
		return true, p.fail(domain.PairingError, ev.Err)
	}
	if err := p.sendCode(ctx, ev); err != nil {
		return true, err
	}
	return false, nil
}

func (p *pairing) sendCode(ctx context.Context, ev whatsapp.QREvent) error {
	p.sent++
	rec := domain.WhatsAppQRSent{Session: p.id, Index: p.sent, ValidForMs: ev.Timeout.Milliseconds()}
	png, err := whatsapp.QRPNG(ev.Code)
	if err == nil {
		photo := channels.Attachment{Name: "whatsapp-qr.png", MIME: "image/png", Data: png}
		err = p.ch.SendPhoto(ctx, p.chatID, photo, pairingText(p.lang, textScan))
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
		if rerr := p.record(ctx, domain.WhatsAppPairingFailed{Session: p.id, Reason: domain.PairingUndeliverable, Error: err.Error()}); rerr != nil {
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
	if err := p.record(ctx, domain.WhatsAppPaired{Session: p.id}); err != nil {
		p.log.Warn("whatsapp qr: could not record the pairing", "err", err)
	}
	p.log.Info("whatsapp qr: paired")
	p.notify(ctx, pairingText(p.lang, textPaired))
	return nil
}

// fail records and announces a session that ended without a link, and
// returns cause wrapped.
func (p *pairing) fail(reason string, cause error) error {
	ctx, cancel := noticeContext(context.Background())
	defer cancel()
	if err := p.record(ctx, domain.WhatsAppPairingFailed{Session: p.id, Reason: reason, Error: cause.Error()}); err != nil {
		p.log.Warn("whatsapp qr: could not record the failure", "err", err)
	}
	p.log.Warn("whatsapp qr: pairing ended without a link", "reason", reason, "err", cause)
	text := pairingText(p.lang, textFailed)
	if reason == domain.PairingTimeout {
		text = pairingText(p.lang, textTimeout)
	}
	if reason != domain.PairingCanceled {
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
	if _, err := p.q.Store.Append(ctx, domain.WhatsAppPairingStream, eventstore.Any, ev); err != nil {
		return fmt.Errorf("record %s: %w", payload.EventType(), err)
	}
	return nil
}

func noticeContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), noticeTimeout)
}

// Pairing texts. They live here rather than in the i18n catalogue because
// only this flow uses them.
type pairingKey int

const (
	textScan pairingKey = iota
	textPaired
	textTimeout
	textFailed
)

var pairingTexts = map[string][4]string{
	i18n.English: {
		"Scan this code with WhatsApp: Settings → Linked devices → Link a device. A new code follows if it expires.",
		"WhatsApp is linked. I will now answer your WhatsApp messages too.",
		"The WhatsApp pairing timed out. Send /whatsapp to get a new code.",
		"WhatsApp pairing failed. Send /whatsapp to try again.",
	},
	i18n.Spanish: {
		"Escanea este código con WhatsApp: Ajustes → Dispositivos vinculados → Vincular un dispositivo. Si caduca, llegará uno nuevo.",
		"WhatsApp está vinculado. Ahora también responderé a tus mensajes de WhatsApp.",
		"La vinculación de WhatsApp caducó. Envía /whatsapp para obtener un código nuevo.",
		"La vinculación de WhatsApp falló. Envía /whatsapp para intentarlo de nuevo.",
	},
	i18n.Portuguese: {
		"Escaneie este código com o WhatsApp: Configurações → Dispositivos conectados → Conectar um dispositivo. Se expirar, chega um novo.",
		"O WhatsApp está conectado. Agora também responderei às suas mensagens do WhatsApp.",
		"A conexão do WhatsApp expirou. Envie /whatsapp para receber um novo código.",
		"A conexão do WhatsApp falhou. Envie /whatsapp para tentar de novo.",
	},
	i18n.French: {
		"Scannez ce code avec WhatsApp : Réglages → Appareils connectés → Connecter un appareil. Un nouveau code suit s'il expire.",
		"WhatsApp est associé. Je répondrai désormais aussi à vos messages WhatsApp.",
		"L'association WhatsApp a expiré. Envoyez /whatsapp pour obtenir un nouveau code.",
		"L'association WhatsApp a échoué. Envoyez /whatsapp pour réessayer.",
	},
	i18n.German: {
		"Scanne diesen Code mit WhatsApp: Einstellungen → Verknüpfte Geräte → Gerät hinzufügen. Läuft er ab, folgt ein neuer.",
		"WhatsApp ist verbunden. Ich beantworte jetzt auch deine WhatsApp-Nachrichten.",
		"Die WhatsApp-Kopplung ist abgelaufen. Sende /whatsapp für einen neuen Code.",
		"Die WhatsApp-Kopplung ist fehlgeschlagen. Sende /whatsapp, um es erneut zu versuchen.",
	},
	i18n.Italian: {
		"Scansiona questo codice con WhatsApp: Impostazioni → Dispositivi collegati → Collega un dispositivo. Se scade, ne arriva uno nuovo.",
		"WhatsApp è collegato. Ora risponderò anche ai tuoi messaggi WhatsApp.",
		"Il collegamento di WhatsApp è scaduto. Invia /whatsapp per un nuovo codice.",
		"Il collegamento di WhatsApp non è riuscito. Invia /whatsapp per riprovare.",
	},
	i18n.Dutch: {
		"Scan deze code met WhatsApp: Instellingen → Gekoppelde apparaten → Apparaat koppelen. Verloopt hij, dan volgt een nieuwe.",
		"WhatsApp is gekoppeld. Ik beantwoord nu ook je WhatsApp-berichten.",
		"Het koppelen van WhatsApp is verlopen. Stuur /whatsapp voor een nieuwe code.",
		"Het koppelen van WhatsApp is mislukt. Stuur /whatsapp om het opnieuw te proberen.",
	},
	i18n.Russian: {
		"Отсканируйте этот код в WhatsApp: Настройки → Связанные устройства → Привязка устройства. Если он истечёт, придёт новый.",
		"WhatsApp подключён. Теперь я отвечаю и на ваши сообщения в WhatsApp.",
		"Время привязки WhatsApp истекло. Отправьте /whatsapp, чтобы получить новый код.",
		"Не удалось привязать WhatsApp. Отправьте /whatsapp, чтобы попробовать снова.",
	},
}

func pairingText(lang string, k pairingKey) string {
	if t, ok := pairingTexts[lang]; ok {
		return t[k]
	}
	return pairingTexts[i18n.English][k]
}
