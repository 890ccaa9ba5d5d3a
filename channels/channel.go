// Package channels defines the port every messaging channel implements
// (terminal, HTTP, Telegram, WhatsApp) and the messages that cross it.
package channels

import (
	"context"
	"errors"
	"time"
)

// Attachment is a file that arrived with a message.
type Attachment struct {
	Name string // original or generated file name, no directory part
	MIME string
	Data []byte
}

// Incoming is one message as a channel received it.
type Incoming struct {
	Channel    string // "telegram", "whatsapp", "terminal", "http", ...
	SenderID   string // stable id of the person on that channel
	SenderName string
	ChatID     string // where replies go (equals SenderID in private chats)
	Text       string
	// PlatformID is the platform's own id of the message or update; the
	// pipeline deduplicates on (Channel, PlatformID) so a redelivered
	// update is never processed twice.
	PlatformID string
	IsGroup    bool
	Mentioned  bool // the bot was mentioned or replied to (groups)
	// Trusted marks the owner's own channels (terminal, HTTP behind its
	// token): their senders are allowed without an allowlist.
	Trusted     bool
	Attachments []Attachment
	ReceivedAt  time.Time
}

// Deliver hands an incoming message to the pipeline. It returns once the
// message is durably recorded; a channel acknowledges the message to its
// platform only after Deliver returned nil, so nothing accepted is lost.
type Deliver func(ctx context.Context, in Incoming) error

// SendResult is what the platform said about a delivered message.
type SendResult struct {
	PlatformIDs []string // ids of the sent messages, one per chunk
	Chunks      int
	PlainText   bool // formatting was rejected and plain text was sent
}

// Channel is a messaging platform.
type Channel interface {
	Name() string
	// Start receives messages until ctx ends or Stop is called, handing
	// each to deliver. It returns when receiving has stopped.
	Start(ctx context.Context, deliver Deliver) error
	// SendText sends a reply written in the model's Markdown, converting,
	// chunking and falling back to plain text as the platform requires.
	SendText(ctx context.Context, chatID, text string) (SendResult, error)
	SendTyping(ctx context.Context, chatID string) error
	SendPhoto(ctx context.Context, chatID string, photo Attachment, caption string) error
	Stop(ctx context.Context) error
}

// ImageReceiver is implemented by channels that deliver the images people
// send (as attachments); the system prompt tells the model about them only
// when a running channel does.
type ImageReceiver interface {
	ReceivesImages() bool
}

// CourtesySender is implemented by channels that pace their sends.
// SendCourtesy sends a message that may be dropped (a busy
// acknowledgement) only if it leaves at once and leaves the chat's next
// slot for the message after it; sent reports whether it went. An
// acknowledgement must never delay the reply it announces.
type CourtesySender interface {
	SendCourtesy(ctx context.Context, chatID, text string) (sent bool, err error)
}

// FormatHinter is implemented by channels whose platform renders a subset
// of Markdown; the hint is added to the system prompt.
type FormatHinter interface {
	FormatHint() string
}

// Delivery failure classes, wrapped by channels' send errors.
var (
	// ErrBlocked: the recipient blocked the bot or left the chat. Do not retry.
	ErrBlocked = errors.New("recipient unreachable")
	// ErrRejected: the platform refused the request (bad request). Do not retry.
	ErrRejected = errors.New("rejected by platform")
	// ErrNotConnected: the channel is not connected or not paired.
	ErrNotConnected = errors.New("channel not connected")
)

// ErrNoChannel: the channel a message should go out on is not running in
// this process.
var ErrNoChannel = errors.New("channel not available in this process")

// FailureClass names a send error's class for the record: blocked,
// rejected, not_connected, no_channel, or error (anything else, which may
// pass).
func FailureClass(err error) string {
	switch {
	case errors.Is(err, ErrBlocked):
		return "blocked"
	case errors.Is(err, ErrRejected):
		return "rejected"
	case errors.Is(err, ErrNotConnected):
		return "not_connected"
	case errors.Is(err, ErrNoChannel):
		return "no_channel"
	}
	return "error"
}
