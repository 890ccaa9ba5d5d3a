package pipeline

import (
	"context"
	"log/slog"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/admit"
)

// Auth decides who may talk to omega by allowlist (see admit.Auth).
type Auth = admit.Auth

// PairingGate admits senders the owner approved and offers other unknown
// senders a pairing code (see admit.PairingGate).
type PairingGate = admit.PairingGate

func (d *Driver) authorize(ctx context.Context, st *turnState, log *slog.Logger) error {
	ok, reason, err := d.decide(ctx, st.Received)
	switch {
	case err != nil:
		return err
	case ok:
		st.add(turn.AccessGranted{Reason: reason, Inputs: d.Config.Inputs})
		return nil
	case d.Pairing != nil && d.Pairing.Applies(st.Received):
		denied, err := d.Pairing.Offer(ctx, st.ID, st.Received)
		if err != nil {
			return err
		}
		log.Warn("access denied; pairing code offered", "reason", denied.Reason)
		denied.Inputs = d.Config.Inputs
		st.add(denied)
		return nil
	}
	log.Warn("access denied", "reason", reason)
	st.add(turn.AccessDenied{Reason: reason, Inputs: d.Config.Inputs})
	return nil
}

// decide is Auth.Decide with the senders the owner approved by pairing.
func (d *Driver) decide(ctx context.Context, m *turn.MessageReceived) (bool, string, error) {
	return admit.Decide(ctx, d.Auth, d.Pairing, m)
}

func (d *Driver) welcome(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	lang := i18n.Detect(st.Received.Text)
	m := st.Received
	md := domain.Metadata{CorrelationID: st.ID, CausationID: st.ID, Channel: m.Channel, Sender: m.SenderID}
	p, err := d.Senders.Decide(ctx, m.Channel, m.SenderID, md, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.Welcome(m.SenderName, lang, st.ID), nil
	})
	if err != nil {
		return err
	}
	lang = i18n.OrDefault(p.Language)
	text := d.Prompts.Welcome(lang)
	sent := turn.WelcomeSent{Language: lang, Text: text}
	if _, err := d.send(ctx, st, text); err != nil {
		log.Warn("welcome not delivered", "err", err)
		sent.Error = d.Config.Redactor.Error(err)
	}
	return d.recordOutcome(ctx, st, sent)
}
