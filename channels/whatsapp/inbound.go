package whatsapp

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/intake"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// toIncoming maps a WhatsApp message to the pipeline's form. ok is false
// for messages the channel ignores (groups when disabled, the owner's
// messages to other people, status updates, reactions, empty messages).
func (c *Channel) toIncoming(ctx context.Context, evt *events.Message) (in channels.Incoming, ok bool) {
	info := evt.Info
	if info.Chat.Server == types.BroadcastServer || info.Chat.Server == types.NewsletterServer {
		return in, false
	}
	if evt.IsEdit {
		// The original was answered already; answering the edit as a new
		// message would reply twice.
		return in, false
	}
	if info.IsGroup && !c.cfg.Groups {
		return in, false
	}
	pn, lid := c.client.OwnJIDs()
	if info.IsFromMe && (info.IsGroup || !isSelf(info.Chat, pn, lid)) {
		// The owner writing to someone else is not talking to omega; only
		// the chat with their own number is.
		return in, false
	}
	msg := evt.Message
	text := messageText(msg)
	in = channels.Incoming{
		Channel:    Name,
		SenderID:   senderNumber(info.MessageSource),
		SenderName: info.PushName,
		ChatID:     info.Chat.ToNonAD().String(),
		PlatformID: info.ID,
		IsGroup:    info.IsGroup,
		ReceivedAt: info.Timestamp,
	}
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = time.Now()
	}
	if info.IsGroup {
		in.Mentioned = mentions(contextInfo(msg), pn, lid)
	}
	if img := msg.GetImageMessage(); img != nil {
		data, err := c.client.Download(ctx, img)
		if err != nil {
			// Expired or unreachable media will not come back on retry;
			// deliver the caption and tell the model what is missing.
			c.log.Warn("whatsapp: image download failed", "message_id", info.ID, "err", err)
			text = strings.TrimSpace(text + "\n[an image was attached but could not be downloaded]")
		} else {
			in.Attachments = append(in.Attachments, channels.Attachment{
				Name: info.ID + imageExt(img.GetMimetype()),
				MIME: img.GetMimetype(),
				Data: data,
			})
		}
	}
	in.Text = text
	if in.Text == "" && len(in.Attachments) == 0 {
		return in, false
	}
	return in, true
}

// messageText returns the text of a plain, extended (reply, link preview,
// mention) or image message.
func messageText(m *waE2E.Message) string {
	switch {
	case m.GetConversation() != "":
		return m.GetConversation()
	case m.GetExtendedTextMessage() != nil:
		return m.GetExtendedTextMessage().GetText()
	case m.GetImageMessage() != nil:
		return m.GetImageMessage().GetCaption()
	}
	return ""
}

func contextInfo(m *waE2E.Message) *waE2E.ContextInfo {
	if ci := m.GetExtendedTextMessage().GetContextInfo(); ci != nil {
		return ci
	}
	return m.GetImageMessage().GetContextInfo()
}

// mentions reports whether the message @-mentions the bot's account or
// replies to one of its messages.
func mentions(ci *waE2E.ContextInfo, pn, lid types.JID) bool {
	if ci == nil {
		return false
	}
	own := func(s string) bool {
		j, err := types.ParseJID(s)
		return err == nil && isSelf(j, pn, lid)
	}
	return slices.ContainsFunc(ci.GetMentionedJID(), own) ||
		(ci.GetParticipant() != "" && own(ci.GetParticipant()))
}

func isSelf(j, pn, lid types.JID) bool {
	j = j.ToNonAD()
	return (!pn.IsEmpty() && j.User == pn.User && j.Server == pn.Server) ||
		(!lid.IsEmpty() && j.User == lid.User && j.Server == lid.Server)
}

// senderNumber returns the sender's phone number. Newer chats address
// people by an opaque LID; the phone number then travels as SenderAlt.
func senderNumber(src types.MessageSource) string {
	s := src.Sender
	if s.Server == types.HiddenUserServer && src.SenderAlt.Server == types.DefaultUserServer {
		s = src.SenderAlt
	}
	return s.User
}

func imageExt(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	default:
		return ".jpg"
	}
}

// seenSet remembers the most recent message ids so a message WhatsApp
// redelivers after a reconnect is not handed to the pipeline twice. It is
// only a fast path: the pipeline deduplicates durably on PlatformID.
type seenSet struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = newest
	index map[string]*list.Element
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, order: list.New(), index: make(map[string]*list.Element, max)}
}

func (s *seenSet) Contains(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.index[id]
	return ok
}

func (s *seenSet) Add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.index[id]; ok {
		s.order.MoveToFront(e)
		return
	}
	s.index[id] = s.order.PushFront(id)
	if s.order.Len() > s.max {
		oldest := s.order.Back()
		s.order.Remove(oldest)
		delete(s.index, oldest.Value.(string))
	}
}

// handleMessage delivers one message; false leaves it unacknowledged so
// WhatsApp delivers it again.
func (c *Channel) handleMessage(evt *events.Message) bool {
	ctx, deliver := c.delivery()
	if deliver == nil {
		return false
	}
	id := evt.Info.ID
	if c.seen.Contains(id) {
		c.log.Debug("whatsapp: duplicate message ignored", "message_id", id)
		return true
	}
	in, ok := c.toIncoming(ctx, evt)
	if !ok {
		c.seen.Add(id)
		return true
	}
	if err := deliver(ctx, in); errors.Is(err, intake.ErrInvalidMessage) {
		// Redelivery cannot help: acknowledge and skip it.
		c.log.Warn("whatsapp: message refused at intake; skipped", "message_id", id, "chat", in.ChatID, "sender", in.SenderID, "err", err)
		c.seen.Add(id)
		return true
	} else if err != nil {
		c.log.Error("whatsapp: deliver failed; message left unacknowledged",
			"message_id", id, "chat", in.ChatID, "err", fmt.Errorf("deliver: %w", err))
		return false
	}
	c.seen.Add(id)
	return true
}
