package whatsapp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

type sentMsg struct {
	to  types.JID
	msg *waE2E.Message
}

// fakeClient records what the channel asks of whatsmeow.
type fakeClient struct {
	mu          sync.Mutex
	pn, lid     types.JID
	loggedIn    bool
	connectErrs []error // returned by successive Connect calls, then nil
	connects    int
	connected   chan struct{} // one value per Connect call
	sendErr     error
	refuseEdits bool // edits fail as WhatsApp's server refusing them
	sent        []sentMsg
	uploads     [][]byte
	download    []byte
	downloadErr error
	downloads   int
	presences   []types.JID
	handler     func(any) bool
	unacked     []any // events the channel did not acknowledge
	qr          chan whatsmeow.QRChannelItem
	pairCode    string
	pairedPhone string
}

func newFakeClient() *fakeClient {
	return &fakeClient{
		pn:        types.NewJID("15550001111", types.DefaultUserServer),
		lid:       types.NewJID("99887766", types.HiddenUserServer),
		loggedIn:  true,
		connected: make(chan struct{}, 64),
	}
}

func (f *fakeClient) Connect() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connects++
	f.connected <- struct{}{}
	if len(f.connectErrs) > 0 {
		err := f.connectErrs[0]
		f.connectErrs = f.connectErrs[1:]
		return err
	}
	// WhatsApp's server keeps a message the client did not acknowledge
	// and sends it again once the client is back.
	again := f.unacked
	f.unacked = nil
	go func() {
		for _, evt := range again {
			f.push(evt)
		}
	}()
	return nil
}

// push hands evt to the channel as whatsmeow would and reports whether
// the channel acknowledged it; one it did not comes again on the next
// Connect.
func (f *fakeClient) push(evt any) bool {
	f.mu.Lock()
	h := f.handler
	f.mu.Unlock()
	if h != nil && h(evt) {
		return true
	}
	f.mu.Lock()
	f.unacked = append(f.unacked, evt)
	f.mu.Unlock()
	return false
}

// waitStarted waits until the channel connected at least n times.
func (f *fakeClient) waitStarted(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		c := f.connects
		f.mu.Unlock()
		if c >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Connect called %d times, want %d", c, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fakeClient) Disconnect() {}

func (f *fakeClient) IsLoggedIn() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loggedIn
}

func (f *fakeClient) OwnJIDs() (types.JID, types.JID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pn, f.lid
}

func (f *fakeClient) SendMessage(_ context.Context, to types.JID, msg *waE2E.Message) (whatsmeow.SendResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sendErr != nil {
		return whatsmeow.SendResponse{}, f.sendErr
	}
	if edit := editOf(msg); edit != nil && (f.refuseEdits || !f.hasSent(edit.GetKey().GetID())) {
		return whatsmeow.SendResponse{}, fmt.Errorf("%w 406", whatsmeow.ErrServerReturnedError)
	}
	f.sent = append(f.sent, sentMsg{to, msg})
	return whatsmeow.SendResponse{ID: fmt.Sprintf("OUT%d", len(f.sent))}, nil
}

func (f *fakeClient) Upload(_ context.Context, data []byte, _ whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads = append(f.uploads, data)
	return whatsmeow.UploadResponse{URL: "https://mmg.example/x", DirectPath: "/v/x", MediaKey: []byte("key"), FileLength: uint64(len(data))}, nil
}

func (f *fakeClient) Download(context.Context, whatsmeow.DownloadableMessage) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.downloads++
	return f.download, f.downloadErr
}

func (f *fakeClient) SendChatPresence(_ context.Context, jid types.JID, _ types.ChatPresence, _ types.ChatPresenceMedia) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.presences = append(f.presences, jid)
	return nil
}

func (f *fakeClient) AddEventHandler(h func(any) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakeClient) GetQRChannel(context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	return f.qr, nil
}

func (f *fakeClient) PairPhone(_ context.Context, phone string) (string, error) {
	f.pairedPhone = phone
	return f.pairCode, nil
}

func (f *fakeClient) sentMessages() []sentMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentMsg(nil), f.sent...)
}

func (f *fakeClient) BuildEdit(chat types.JID, id types.MessageID, m *waE2E.Message) *waE2E.Message {
	return new(whatsmeow.Client).BuildEdit(chat, id, m) // builds the message only, no client state
}

// editOf is the protocol message of an edit, nil for other messages.
func editOf(msg *waE2E.Message) *waE2E.ProtocolMessage {
	pm := msg.GetEditedMessage().GetMessage().GetProtocolMessage()
	if pm.GetType() != waE2E.ProtocolMessage_MESSAGE_EDIT {
		return nil
	}
	return pm
}

// hasSent reports whether id is a message sent so far; f.mu is held.
func (f *fakeClient) hasSent(id string) bool {
	for i := range f.sent {
		if fmt.Sprintf("OUT%d", i+1) == id && editOf(f.sent[i].msg) == nil {
			return true
		}
	}
	return false
}

// visible returns the texts of the text messages sent, as edited.
func (f *fakeClient) visible() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var texts []string
	index := map[string]int{}
	for i, s := range f.sent {
		if edit := editOf(s.msg); edit != nil {
			texts[index[edit.GetKey().GetID()]] = edit.GetEditedMessage().GetConversation()
			continue
		}
		if s.msg.GetImageMessage() == nil {
			index[fmt.Sprintf("OUT%d", i+1)] = len(texts)
			texts = append(texts, s.msg.GetConversation())
		}
	}
	return texts
}
