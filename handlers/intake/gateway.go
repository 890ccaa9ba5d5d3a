// Package intake accepts incoming messages from every channel: it bounds
// and validates them and records each as the first event of a new turn.
package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/intake"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// turnNamespace derives turn ids from platform message ids, so that a
// redelivered message maps to the turn it already has.
var turnNamespace = uuid.MustParse("6f6d6567-612d-7475-726e-000000000001")

// Gateway accepts incoming messages: each becomes a turn whose first event
// is MessageReceived. Once Receive returns nil the message is durable.
type Gateway struct {
	store  eventstore.Store
	inbox  string                // directory for attachments, one folder per turn
	kick   func(chat, tn string) // hands the new turn to the scheduler, keyed by its chat
	now    func() time.Time
	maxLen int // longest text accepted; longer is truncated (0: intake.MaxTextLen)
	secret Masker
	logger *slog.Logger
}

// Masker masks omega's own secrets in a text and says how many it masked.
type Masker interface {
	Redact(s string) (string, int)
}

// Option configures a Gateway.
type Option func(*Gateway)

// WithSecrets masks omega's own secrets (bot and API tokens, provider
// keys) in what a person sends, before anything is recorded: a token
// pasted into a chat would otherwise be stored in the turn's events, the
// audit and the prompt, and echoed back.
func WithSecrets(m Masker, logger *slog.Logger) Option {
	return func(g *Gateway) { g.secret, g.logger = m, logger }
}

// NewGateway returns a gateway that records turns in store, saves
// attachments under inbox and hands each new turn to kick (nil: nobody is
// told; the scheduler finds the turn in the read model).
func NewGateway(store eventstore.Store, inbox string, kick func(chat, tn string), opts ...Option) (*Gateway, error) {
	if store == nil || inbox == "" {
		return nil, errors.New("intake: gateway needs a store and an inbox directory")
	}
	g := &Gateway{store: store, inbox: inbox, kick: kick, now: time.Now}
	for _, o := range opts {
		o(g)
	}
	return g, nil
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
// turn's id with ErrDuplicate. A message that fails intake validation
// (see intake.ValidateIntake) is refused with an error matching
// intake.ErrInvalidMessage before anything is recorded.
func (g *Gateway) Receive(ctx context.Context, in channels.Incoming) (string, error) {
	clean, err := intake.ValidateIntake(intake.Intake{
		Channel: in.Channel, SenderID: in.SenderID, SenderName: in.SenderName,
		ChatID: in.ChatID, PlatformID: in.PlatformID, Text: in.Text,
	}, g.maxLen)
	if err != nil {
		return "", fmt.Errorf("receive %s message: %w", in.Channel, err)
	}
	in.SenderName, in.Text = clean.SenderName, clean.Text
	redacted := g.maskSecrets(&in)
	if strings.TrimSpace(in.Text) == "" && len(in.Attachments) == 0 {
		return "", fmt.Errorf("receive: %w", &intake.InvalidMessageError{Field: "text", Reason: "is empty"})
	}
	id := TurnID(in)
	stream := domain.TurnStream(id)
	// The append below refuses a message received before (its stream
	// exists); only one with files looks first, so that a redelivery does
	// not write them again.
	if in.PlatformID != "" && len(in.Attachments) > 0 {
		if v, err := g.store.StreamVersion(ctx, stream); err != nil {
			return "", err
		} else if v > 0 {
			return id, ErrDuplicate
		}
	}
	now := g.now()
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = now
	}
	if in.ChatID == "" {
		in.ChatID = in.SenderID
	}
	refs, err := g.saveAttachments(id, in.Attachments)
	if err != nil {
		return "", err
	}
	msg := turn.MessageReceived{
		Channel: in.Channel, SenderID: in.SenderID, SenderName: in.SenderName, ChatID: in.ChatID, Text: in.Text,
		PlatformID: in.PlatformID, IsGroup: in.IsGroup, Mentioned: in.Mentioned, Trusted: in.Trusted,
		Attachments: refs, ReceivedAt: in.ReceivedAt.UTC(), SecretsRedacted: redacted,
	}
	ev, err := domain.NewEventFrom(msg, domain.Metadata{CorrelationID: id, Channel: in.Channel, Sender: in.SenderID})
	if err != nil {
		return "", err
	}
	if _, err := g.store.Append(ctx, stream, eventstore.NoStream, ev); err != nil {
		if errors.Is(err, eventstore.ErrConcurrency) {
			return id, ErrDuplicate
		}
		return "", fmt.Errorf("receive %s message from %s: %w", in.Channel, in.SenderID, err)
	}
	if g.kick != nil {
		g.kick(msg.Chat().Key(), id) // turns are ordered per chat
	}
	return id, nil
}

// maskSecrets masks omega's own secrets in the message's text and sender
// name and returns how many it masked.
func (g *Gateway) maskSecrets(in *channels.Incoming) int {
	if g.secret == nil {
		return 0
	}
	var n, m int
	in.Text, n = g.secret.Redact(in.Text)
	in.SenderName, m = g.secret.Redact(in.SenderName)
	if n+m > 0 && g.logger != nil {
		g.logger.Warn("a message held a secret of omega's configuration; it was masked before recording",
			"channel", in.Channel, "sender", in.SenderID, "secrets", n+m)
	}
	return n + m
}

func (g *Gateway) saveAttachments(turnID string, as []channels.Attachment) ([]turn.AttachmentRef, error) {
	if len(as) == 0 {
		return nil, nil
	}
	dir := filepath.Join(g.inbox, turnID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create inbox %s: %w", dir, err)
	}
	refs := make([]turn.AttachmentRef, 0, len(as))
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
		refs = append(refs, turn.AttachmentRef{Name: name, MIME: a.MIME, Path: path, Size: int64(len(a.Data)), SHA256: hex.EncodeToString(sum[:])})
	}
	return refs, nil
}
