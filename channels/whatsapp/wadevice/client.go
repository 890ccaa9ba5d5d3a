package wadevice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
)

// Client adapts *whatsmeow.Client to what the channel uses of it.
type Client struct{ c *whatsmeow.Client }

// Open returns a client of the device stored in container (a fresh,
// unpaired device when there is none yet).
func Open(ctx context.Context, container *sqlstore.Container, logger *slog.Logger) (*Client, error) {
	if container == nil {
		return nil, errors.New("whatsapp client: no device store")
	}
	dev, err := container.GetFirstDevice(ctx)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: load device: %w", err)
	}
	wc := whatsmeow.NewClient(dev, newWALogger(logger, "client"))
	// Reconnection is the channel's: capped backoff, and a logged-out
	// hook instead of silently giving up.
	wc.EnableAutoReconnect = false
	// Acknowledge a message only once every handler returned true, that
	// is once the pipeline recorded it; otherwise WhatsApp redelivers it.
	wc.SynchronousAck = true
	return &Client{wc}, nil
}

// Connect connects to WhatsApp.
func (w *Client) Connect() error { return w.c.Connect() }

// Disconnect closes the connection.
func (w *Client) Disconnect() { w.c.Disconnect() }

// IsLoggedIn reports whether the device is paired and logged in.
func (w *Client) IsLoggedIn() bool { return w.c.IsLoggedIn() }

// OwnJIDs returns the linked account's phone-number and LID JIDs
// (empty when no device is paired).
func (w *Client) OwnJIDs() (types.JID, types.JID) {
	if w.c.Store.ID == nil {
		return types.EmptyJID, types.EmptyJID
	}
	return w.c.Store.ID.ToNonAD(), w.c.Store.LID.ToNonAD()
}

// SendMessage sends msg to the chat to.
func (w *Client) SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	return w.c.SendMessage(ctx, to, msg)
}

// BuildEdit wraps newContent as an edit of the own message id in chat.
func (w *Client) BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message {
	return w.c.BuildEdit(chat, id, newContent)
}

// Upload encrypts and uploads media.
func (w *Client) Upload(ctx context.Context, data []byte, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	return w.c.Upload(ctx, data, mt)
}

// Download fetches and decrypts the media of msg.
func (w *Client) Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	return w.c.Download(ctx, msg)
}

// SendChatPresence shows or clears the typing indicator in jid.
func (w *Client) SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error {
	return w.c.SendChatPresence(ctx, jid, state, media)
}

// AddEventHandler registers h; when h returns false for a message
// event, the message is not acknowledged and WhatsApp redelivers it.
func (w *Client) AddEventHandler(h func(evt any) bool) {
	w.c.AddEventHandlerWithSuccessStatus(h)
}

// GetQRChannel starts pairing by QR code.
func (w *Client) GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	return w.c.GetQRChannel(ctx)
}

// PairPhone starts pairing by a link code for the phone number.
func (w *Client) PairPhone(ctx context.Context, phone string) (string, error) {
	// The display name must look like "Browser (OS)"; WhatsApp validates it.
	return w.c.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
}
