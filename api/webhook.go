package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	intakedom "github.com/omega-gateway/omega/domain/intake"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

type webhookIn struct {
	Mode     string `json:"mode"` // direct or ai
	Channel  string `json:"channel"`
	ChatID   string `json:"chat_id"`
	SenderID string `json:"sender_id"`
	Text     string `json:"text"`
}

// webhook: direct mode sends the text to a chat now; AI mode runs it as a
// turn whose reply goes to that channel.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) {
	var in webhookIn
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Text) == "" || in.Channel == "" {
		writeError(w, http.StatusBadRequest, "channel and text are required")
		return
	}
	ch, ok := s.Channels.Channel(in.Channel)
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("channel %q is not running in this omega", in.Channel))
		return
	}
	switch in.Mode {
	case "direct", "":
		s.webhookDirect(w, r, ch, in)
	case "ai":
		s.webhookAI(w, r, in)
	default:
		writeError(w, http.StatusBadRequest, `mode must be "direct" or "ai"`)
	}
}

func (s *Server) webhookDirect(w http.ResponseWriter, r *http.Request, ch channels.Channel, in webhookIn) {
	if in.ChatID == "" {
		writeError(w, http.StatusBadRequest, "chat_id is required in direct mode")
		return
	}
	res, sendErr := ch.SendText(r.Context(), in.ChatID, in.Text)
	rec := system.WebhookDelivered{Channel: in.Channel, ChatID: in.ChatID, Text: in.Text, Chunks: res.Chunks}
	if sendErr != nil {
		rec.Error = sendErr.Error()
	}
	id := uuid.NewString()
	ev, err := domain.NewEventFrom(rec, domain.Metadata{CorrelationID: id, Channel: in.Channel})
	if err == nil {
		_, err = s.Store.Append(context.WithoutCancel(r.Context()), system.WebhookStream(id), eventstore.NoStream, ev)
	}
	if err != nil {
		s.Logger.Error("webhook: record delivery", "err", err)
	}
	if sendErr != nil {
		s.Logger.Warn("webhook: delivery failed", "channel", in.Channel, "err", sendErr)
		writeError(w, http.StatusBadGateway, "delivery failed: "+sendErr.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "sent", "chunks": res.Chunks, "id": id})
}

func (s *Server) webhookAI(w http.ResponseWriter, r *http.Request, in webhookIn) {
	sender := in.SenderID
	if sender == "" {
		sender = s.DefaultSenders[in.Channel]
	}
	if sender == "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("sender_id is required: channel %s has no allowlisted user to act for", in.Channel))
		return
	}
	chat := in.ChatID
	if chat == "" {
		chat = sender
	}
	id, err := s.Receiver.Receive(r.Context(), channels.Incoming{Channel: in.Channel, SenderID: sender, ChatID: chat, Text: in.Text, Trusted: true})
	if errors.Is(err, intakedom.ErrInvalidMessage) {
		writeError(w, http.StatusBadRequest, invalidReason(err))
		return
	}
	if err != nil {
		s.Logger.Error("webhook: receive", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the message could not be recorded; try again")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted", "turn_id": id})
}
