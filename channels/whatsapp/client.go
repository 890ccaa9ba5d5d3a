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
