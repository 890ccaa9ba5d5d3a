package apply

import (
	"context"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// onSender applies a decision on the sender's own stream and keeps the
// run's profile current.
func (h *Markers) onSender(ctx context.Context, run *markerRun, md domain.Metadata, effect string, decide func(sender.SenderProfile) []domain.Payload) (markers.AppliedMarker, error) {
	am, p, err := h.onProfile(ctx, run.turn.Received.Sender(), md, effect, decide)
	if err == nil {
		run.profile = p
	}
	return am, err
}

// onChat applies a decision on the profile holding the chat's provider
// session: the sender's, or in a group the group's own.
func (h *Markers) onChat(ctx context.Context, run *markerRun, md domain.Metadata, effect string, decide func(sender.SenderProfile) []domain.Payload) (markers.AppliedMarker, error) {
	m := run.turn.Received
	if m.Chat() == m.Sender() {
		return h.onSender(ctx, run, md, effect, decide)
	}
	am, _, err := h.onProfile(ctx, m.Chat(), md, effect, decide)
	return am, err
}

// onProfile applies a decision on ref's profile stream, once per marker.
func (h *Markers) onProfile(ctx context.Context, ref sender.SenderRef, md domain.Metadata, effect string, decide func(sender.SenderProfile) []domain.Payload) (markers.AppliedMarker, sender.SenderProfile, error) {
	stream, err := h.Profiles.ProfileStream(ctx, ref.Channel, ref.ID)
	if err != nil {
		return markers.AppliedMarker{}, sender.SenderProfile{}, err
	}
	p := &sender.SenderProfile{}
	done, err := h.Once(ctx, stream, md, func() eventstore.Aggregate { p = &sender.SenderProfile{}; return p },
		func() ([]domain.Payload, error) { return decide(*p), nil })
	if err != nil {
		return markers.AppliedMarker{}, sender.SenderProfile{}, err
	}
	if done {
		effect += " (already recorded)"
	}
	return markers.AppliedMarker{Effect: effect, Stream: stream}, *p, nil
}

func applyProjectActivate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.ProjectActivate) (markers.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "project "+v.Project+" active", func(p sender.SenderProfile) []domain.Payload {
		if p.ActiveProject == v.Project {
			return nil
		}
		return []domain.Payload{sender.ProjectActivated{Project: v.Project}}
	})
}

func applyProjectDeactivate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.ProjectDeactivate) (markers.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "no project active", func(p sender.SenderProfile) []domain.Payload {
		if p.ActiveProject == "" {
			return nil
		}
		return []domain.Payload{sender.ProjectDeactivated{Project: p.ActiveProject}}
	})
}

func applyWhatsAppQR(ctx context.Context, h *Markers, run *markerRun, _ domain.Metadata, _ markers.WhatsAppQR) (markers.AppliedMarker, error) {
	if h.WhatsApp == nil {
		return markers.AppliedMarker{Effect: "whatsapp not enabled"}, nil
	}
	m := run.turn.Received
	if err := h.WhatsApp.SendQR(ctx, m.Channel, m.ChatID); err != nil {
		h.Logger.Warn("whatsapp pairing failed", "turn", run.turn.ID, "err", err)
		return markers.AppliedMarker{Effect: "whatsapp pairing failed: " + err.Error()}, nil
	}
	return markers.AppliedMarker{Effect: "qr sent"}, nil
}

func applyLangSwitch(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.LangSwitch) (markers.AppliedMarker, error) {
	lang := v.Language
	if l, ok := i18n.Normalize(lang); ok {
		lang = l
	}
	am, err := h.onSender(ctx, run, md, "language "+lang, func(p sender.SenderProfile) []domain.Payload { return p.SwitchLanguage(lang) })
	run.lang = h.language(run.turn, run.profile)
	return am, err
}

func applyPersonality(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Personality) (markers.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "personality set", func(p sender.SenderProfile) []domain.Payload { return p.SetPersonality(v.Style) })
}

func applyPurgeFacts(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.PurgeFacts) (markers.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "facts purged", func(p sender.SenderProfile) []domain.Payload { return p.PurgeFacts() })
}

func applyForget(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.ForgetConversation) (markers.AppliedMarker, error) {
	am, err := h.onChat(ctx, run, md, "conversation closed, session cleared", func(p sender.SenderProfile) []domain.Payload { return p.ClearSession(run.project, "forget") })
	if err == nil && !run.forgot && run.turn.Context != nil {
		run.forgot = true
		run.events = append(run.events, turn.ConversationClosed{ConversationID: run.turn.Context.ConversationID, Sender: run.sender, Project: run.project})
	}
	return am, err
}
