package whatsapp

import (
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// client is the part of *whatsmeow.Client the channel uses; tests drive the
// channel through a fake.
type client interface {
	Connect() error
	Disconnect()
	IsLoggedIn() bool
	// OwnJIDs returns the linked account's phone-number and LID JIDs
	// (empty when no device is paired).
	OwnJIDs() (pn, lid types.JID)
	SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error)
	// BuildEdit wraps newContent as an edit of the own message id in chat,
	// to be sent with SendMessage.
	BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message
	Upload(ctx context.Context, data []byte, mediaType whatsmeow.MediaType) (whatsmeow.UploadResponse, error)
	Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error)
	SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error
	// AddEventHandler registers h; when h returns false for a message
	// event, the message is not acknowledged and WhatsApp redelivers it.
	AddEventHandler(h func(evt any) bool)
	GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error)
	PairPhone(ctx context.Context, phone string) (string, error)
}

// waClient adapts *whatsmeow.Client to client.
type waClient struct{ c *whatsmeow.Client }

func (w waClient) Connect() error   { return w.c.Connect() }
func (w waClient) Disconnect()      { w.c.Disconnect() }
func (w waClient) IsLoggedIn() bool { return w.c.IsLoggedIn() }

func (w waClient) OwnJIDs() (types.JID, types.JID) {
	if w.c.Store.ID == nil {
		return types.EmptyJID, types.EmptyJID
	}
	return w.c.Store.ID.ToNonAD(), w.c.Store.LID.ToNonAD()
}

func (w waClient) SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	return w.c.SendMessage(ctx, to, msg)
}

func (w waClient) BuildEdit(chat types.JID, id types.MessageID, newContent *waE2E.Message) *waE2E.Message {
	return w.c.BuildEdit(chat, id, newContent)
}

func (w waClient) Upload(ctx context.Context, data []byte, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	return w.c.Upload(ctx, data, mt)
}

func (w waClient) Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	return w.c.Download(ctx, msg)
}

func (w waClient) SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error {
	return w.c.SendChatPresence(ctx, jid, state, media)
}

func (w waClient) AddEventHandler(h func(evt any) bool) {
	w.c.AddEventHandlerWithSuccessStatus(h)
}

func (w waClient) GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	return w.c.GetQRChannel(ctx)
}

func (w waClient) PairPhone(ctx context.Context, phone string) (string, error) {
	// The display name must look like "Browser (OS)"; WhatsApp validates it.
	return w.c.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
}
