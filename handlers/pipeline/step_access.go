package pipeline

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

// Auth decides who may talk to omega: owner channels (terminal, HTTP with
// its token) are trusted; everyone else must be on their channel's
// allowlist, and a channel without one allows nobody.
type Auth struct {
	Allowed map[string][]string // channel -> sender ids
}

// Decide returns whether the message's sender is allowed, and why.
func (a Auth) Decide(m *turn.MessageReceived) (bool, string) {
	if m.Trusted {
		return true, "owner channel " + m.Channel
	}
	if _, listed := a.Allowed[m.Channel]; m.Task != nil && !listed {
		// A scheduled action from an owner channel (no allowlist there);
		// on other channels its sender must still be allowed.
		return true, "scheduled action on owner channel " + m.Channel
	}
	list, ok := a.Allowed[m.Channel]
	if !ok || len(list) == 0 {
		return false, fmt.Sprintf("no allowlist configured for channel %s (deny by default)", m.Channel)
	}
	for _, id := range list {
		if id == m.SenderID {
			return true, "allowlisted on " + m.Channel
		}
	}
	return false, fmt.Sprintf("sender %s is not on the %s allowlist", m.SenderID, m.Channel)
}

// PairingGate admits senders the owner approved and offers other unknown
// senders a pairing code instead of a plain denial (the access package).
type PairingGate interface {
	// Applies reports whether an unknown sender of m may pair.
	Applies(m *turn.MessageReceived) bool
	Approved(ctx context.Context, m *turn.MessageReceived) (bool, error)
	// Offer records (or finds) the sender's code and returns the denial
	// that carries it.
	Offer(ctx context.Context, turnID string, m *turn.MessageReceived) (turn.AccessDenied, error)
}

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
	ok, reason := d.Auth.Decide(m)
	if ok || d.Pairing == nil || !d.Pairing.Applies(m) {
		return ok, reason, nil
	}
	paired, err := d.Pairing.Approved(ctx, m)
	if err != nil || !paired {
		return false, reason, err
	}
	return true, "paired on " + m.Channel + " (approved by the owner)", nil
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
