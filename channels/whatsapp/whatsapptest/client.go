// Package whatsapptest provides a WhatsApp client double for tests that run
// the WhatsApp channel inside omega's pipeline: it hands the channel
// constructed whatsmeow events and records what the channel sends.
package whatsapptest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/omega-gateway/omega/channels/whatsapp"
)

// OwnNumber is the phone number of the linked account the double plays.
const OwnNumber = "15550001111"

var _ whatsapp.Client = (*Client)(nil)

// Sent is one message the channel sent.
type Sent struct {
	To   types.JID
	Text string // conversation text or image caption
	// Image is set for image messages, with the image's type and size.
	Image bool
	MIME  string
	Size  uint64
	ID    string // the message id the double answered with
	// EditOf is the id of the message this one edits; "" for a new
	// message.
	EditOf string
}

// Client is a logged-in WhatsApp account double.
type Client struct {
	mu          sync.Mutex
	handler     func(any) bool
	sent        []Sent
	changed     chan struct{}
	refuseEdits bool
	server      server
}

// New returns a double that is paired and connects at once.
func New() *Client { return &Client{changed: make(chan struct{})} }

// Deliver hands evt to the channel as whatsmeow would and reports whether
// the channel acknowledged it (false: WhatsApp would redeliver it).
func (c *Client) Deliver(evt any) (bool, error) {
	c.mu.Lock()
	h := c.handler
	c.mu.Unlock()
	if h == nil {
		return false, errors.New("whatsapptest: no channel uses this client")
	}
	return h(evt), nil
}

// TextFrom builds a direct text message from a phone number.
func TextFrom(id, number, text string) *events.Message {
	from := types.NewJID(number, types.DefaultUserServer)
	return &events.Message{
		Info: types.MessageInfo{
			MessageSource: types.MessageSource{Chat: from, Sender: from},
			ID:            id,
			PushName:      "User " + number,
			Timestamp:     time.Now().Truncate(time.Second), // WhatsApp's are whole seconds
		},
		Message: &waE2E.Message{Conversation: proto.String(text)},
	}
}

// Sent returns what the channel sent so far, in order.
func (c *Client) Sent() []Sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Sent(nil), c.sent...)
}

// WaitSent blocks until at least n messages were sent or ctx ends.
func (c *Client) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	for {
		c.mu.Lock()
		sent, changed := append([]Sent(nil), c.sent...), c.changed
		c.mu.Unlock()
		if len(sent) >= n {
			return sent, nil
		}
		select {
		case <-ctx.Done():
			return sent, fmt.Errorf("wait for %d sent messages, have %d: %w", n, len(sent), ctx.Err())
		case <-changed:
		}
	}
}

// Connect implements whatsapp.Client: the double is always connected,
// unless SimulateServer made it play a server that can go away.
func (c *Client) Connect() error { return c.connect() }

func (c *Client) Disconnect()      {}
func (c *Client) IsLoggedIn() bool { return true }

func (c *Client) OwnJIDs() (types.JID, types.JID) {
	return types.NewJID(OwnNumber, types.DefaultUserServer), types.EmptyJID
}

func (c *Client) SendMessage(_ context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	if c.offline() {
		return whatsmeow.SendResponse{}, whatsmeow.ErrNotConnected
	}
	s := Sent{To: to, Text: msg.GetConversation()}
	if img := msg.GetImageMessage(); img != nil {
		s.Text, s.Image, s.MIME, s.Size = img.GetCaption(), true, img.GetMimetype(), img.GetFileLength()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if edit := editOf(msg); edit != nil {
		s.EditOf, s.Text = edit.GetKey().GetID(), edit.GetEditedMessage().GetConversation()
		if err := c.checkEdit(to, edit); err != nil {
			return whatsmeow.SendResponse{}, err
		}
	}
	s.ID = fmt.Sprintf("OUT%d", len(c.sent)+1)
	c.sent = append(c.sent, s)
	close(c.changed)
	c.changed = make(chan struct{})
	return whatsmeow.SendResponse{ID: s.ID, Timestamp: time.Now()}, nil
}

func (c *Client) Upload(_ context.Context, data []byte, _ whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	return whatsmeow.UploadResponse{URL: "https://mmg.example/upload", DirectPath: "/v/upload", FileLength: uint64(len(data))}, nil
}

func (c *Client) Download(context.Context, whatsmeow.DownloadableMessage) ([]byte, error) {
	return nil, errors.New("whatsapptest: media download is not simulated")
}

func (c *Client) SendChatPresence(context.Context, types.JID, types.ChatPresence, types.ChatPresenceMedia) error {
	return nil
}

func (c *Client) AddEventHandler(h func(evt any) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handler = h
}

func (c *Client) GetQRChannel(context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	return nil, errors.New("whatsapptest: already paired")
}

func (c *Client) PairPhone(context.Context, string) (string, error) {
	return "", errors.New("whatsapptest: already paired")
}
