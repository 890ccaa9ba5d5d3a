package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// turnNamespace derives turn ids from platform message ids, so that a
// redelivered message maps to the turn it already has.
var turnNamespace = uuid.MustParse("6f6d6567-612d-7475-726e-000000000001")

// Gateway accepts incoming messages: each becomes a turn whose first event
// is MessageReceived. Once Receive returns nil the message is durable.
type Gateway struct {
	Store  eventstore.Store
	Inbox  string                    // directory for attachments, one folder per turn
	Kick   func(sender, turn string) // hands the new turn to the scheduler
	Now    func() time.Time
	MaxLen int // longest text accepted; longer is truncated (0: 100,000)
}

// ErrDuplicate marks a message that was already received.
var ErrDuplicate = errors.New("message already received")

// TurnID returns the turn id for a message: derived from the platform's
// message id when there is one, random otherwise.
func TurnID(in channels.Incoming) string {
	if in.PlatformID == "" {
		return uuid.NewString()
	}
	return uuid.NewSHA1(turnNamespace, []byte(in.Channel+"\x00"+in.PlatformID)).String()
}

// Receive records the message as a new turn and returns its id. A message
// received before (same channel and platform id) returns the existing
// turn's id with ErrDuplicate.
func (g *Gateway) Receive(ctx context.Context, in channels.Incoming) (string, error) {
	if in.Channel == "" || in.SenderID == "" {
		return "", fmt.Errorf("receive: channel and sender id are required")
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Attachments) == 0 {
		return "", fmt.Errorf("receive: empty message")
	}
	id := TurnID(in)
	stream := domain.TurnStream(id)
	if in.PlatformID != "" {
		if v, err := g.Store.StreamVersion(ctx, stream); err != nil {
			return "", err
		} else if v > 0 {
			return id, ErrDuplicate
		}
	}
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = now
	}
	if in.ChatID == "" {
		in.ChatID = in.SenderID
	}
	maxLen := g.MaxLen
	if maxLen == 0 {
		maxLen = 100_000
	}
	if len(in.Text) > maxLen {
		in.Text = truncateUTF8(in.Text, maxLen) + "\n[message truncated]"
	}
	refs, err := g.saveAttachments(id, in.Attachments)
	if err != nil {
		return "", err
	}
	ev, err := domain.NewEventFrom(domain.MessageReceived{
		Channel: in.Channel, SenderID: in.SenderID, SenderName: in.SenderName, ChatID: in.ChatID, Text: in.Text,
		PlatformID: in.PlatformID, IsGroup: in.IsGroup, Mentioned: in.Mentioned, Trusted: in.Trusted,
		Attachments: refs, ReceivedAt: in.ReceivedAt.UTC(),
	}, domain.Metadata{CorrelationID: id, Channel: in.Channel, Sender: in.SenderID})
	if err != nil {
		return "", err
	}
	if _, err := g.Store.Append(ctx, stream, eventstore.NoStream, ev); err != nil {
		if errors.Is(err, eventstore.ErrConcurrency) {
			return id, ErrDuplicate
		}
		return "", fmt.Errorf("receive %s message from %s: %w", in.Channel, in.SenderID, err)
	}
	if g.Kick != nil {
		g.Kick(in.Channel+"-"+in.SenderID, id)
	}
	return id, nil
}

func (g *Gateway) saveAttachments(turnID string, as []channels.Attachment) ([]domain.AttachmentRef, error) {
	if len(as) == 0 {
		return nil, nil
	}
	dir := filepath.Join(g.Inbox, turnID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create inbox %s: %w", dir, err)
	}
	refs := make([]domain.AttachmentRef, 0, len(as))
	for i, a := range as {
		name := filepath.Base(a.Name)
		if name == "." || name == "/" || name == "" {
			name = fmt.Sprintf("attachment-%d", i+1)
		}
		path := filepath.Join(dir, fmt.Sprintf("%02d-%s", i+1, name))
		if err := os.WriteFile(path, a.Data, 0o600); err != nil {
			return nil, fmt.Errorf("save attachment %s: %w", name, err)
		}
		sum := sha256.Sum256(a.Data)
		refs = append(refs, domain.AttachmentRef{Name: name, MIME: a.MIME, Path: path, Size: int64(len(a.Data)), SHA256: hex.EncodeToString(sum[:])})
	}
	return refs, nil
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
