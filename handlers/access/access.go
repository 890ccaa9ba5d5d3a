// Package access decides who may talk to omega beyond the configured
// allowlists: sender pairing (an unknown sender gets a short code, the
// owner approves or rejects it in chat or on the command line) and
// identity links (one person's identities on several channels share one
// profile). Every request, decision and link is an event on the
// access-pairing or identity-links stream. WhatsApp device pairing (QR
// codes that link omega's own WhatsApp account) is the pairing package.
package access

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/senders"
)

// Defaults of the pairing policy.
const (
	DefaultCodeTTL    = time.Hour
	DefaultMaxPerHour = 3
)

// Config is what the service needs. Channels may be nil (the command
// line): nobody is then notified from this process.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	// Allowed are the configured allowlists (channel -> sender ids); a
	// channel listed here (even with no ids) is one where unknown senders
	// may pair, and the senders listed are owners.
	Allowed map[string][]string
	Policy  access.PairingPolicy
	// Channels sends the owner's and approved senders' notices.
	Channels pipeline.ChannelSet
	// OwnerChannel and OwnerChat are where the owner is told of a new
	// request (the heartbeat's destination); empty: nowhere.
	OwnerChannel, OwnerChat string
	Location                *time.Location
	Random                  io.Reader // nil: crypto/rand
	Now                     func() time.Time
	Logger                  *slog.Logger
}

// Service is sender pairing and identity links.
type Service struct {
	cfg     Config
	senders senders.Service
}

// New checks the configuration.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Registry == nil || cfg.Logger == nil {
		return nil, errors.New("access: needs a store, registry and logger")
	}
	if cfg.Policy.TTL <= 0 {
		cfg.Policy.TTL = DefaultCodeTTL
	}
	if cfg.Policy.MaxPerHour <= 0 {
		cfg.Policy.MaxPerHour = DefaultMaxPerHour
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	profiles, err := senders.New(cfg.Store, cfg.Registry)
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, senders: profiles}, nil
}

func (s *Service) pairing(ctx context.Context) (access.SenderPairing, error) {
	var st access.SenderPairing
	_, err := eventstore.Fold(ctx, s.cfg.Store, s.cfg.Registry, access.SenderPairingStream, &st)
	return st, err
}

// update runs a decision on the pairing stream.
func (s *Service) update(ctx context.Context, md domain.Metadata, decide func(access.SenderPairing) ([]domain.Payload, error)) (access.SenderPairing, error) {
	st, _, err := eventstore.Update(ctx, s.cfg.Store, s.cfg.Registry, access.SenderPairingStream, md,
		func() *access.SenderPairing { return &access.SenderPairing{} },
		func(p *access.SenderPairing) ([]domain.Payload, error) { return decide(*p) })
	return *st, err
}

// Applies implements pipeline.PairingGate: private messages from people
// on a channel with an allowlist may pair; owner channels, groups and
// scheduled actions may not.
func (s *Service) Applies(m *turn.MessageReceived) bool {
	_, listed := s.cfg.Allowed[m.Channel]
	return listed && !m.Trusted && !m.IsGroup && m.Task == nil && !m.Heartbeat
}

// Approved implements pipeline.PairingGate.
func (s *Service) Approved(ctx context.Context, m *turn.MessageReceived) (bool, error) {
	st, err := s.pairing(ctx)
	if err != nil {
		return false, err
	}
	return st.IsApproved(m.Channel, m.SenderID), nil
}

// IsOwner reports whether the message's sender may decide pairings and
// links: a sender on an owner channel or on a configured allowlist (not
// one approved by pairing).
func (s *Service) IsOwner(m *turn.MessageReceived) bool {
	return m.Trusted || slices.Contains(s.cfg.Allowed[m.Channel], m.SenderID)
}

// Offer implements pipeline.PairingGate: it records the sender's code (a
// new one, or the one still valid), tells the owner of a new one, and
// returns the denial that carries it.
func (s *Service) Offer(ctx context.Context, turnID string, m *turn.MessageReceived) (turn.AccessDenied, error) {
	req := access.PairingRequested{Channel: m.Channel, SenderID: m.SenderID, SenderName: m.SenderName, ChatID: m.ChatID,
		TurnID: turnID, Language: i18n.Detect(m.Text)}
	var offer access.PairingOffer
	md := domain.Metadata{CorrelationID: turnID, CausationID: turnID, Channel: m.Channel, Sender: m.SenderID}
	st, err := s.update(ctx, md, func(p access.SenderPairing) ([]domain.Payload, error) {
		o, evs, err := p.Offer(s.cfg.Now(), req, s.cfg.Policy, func() (string, error) { return access.NewPairingCode(s.cfg.Random) })
		offer = o
		return evs, err
	})
	if err != nil {
		return turn.AccessDenied{}, fmt.Errorf("pairing offer: %w", err)
	}
	who := m.Channel + ":" + m.SenderID
	switch {
	case offer.Limited:
		return turn.AccessDenied{Reason: "unknown sender " + who + " asked for too many pairing codes (rate limited)", Pairing: &offer}, nil
	case offer.Fresh:
		if r := st.Requests[offer.Code]; r != nil && !r.OwnerNotified {
			s.notifyOwner(ctx, md, *r)
		}
		return turn.AccessDenied{Reason: "unknown sender " + who + ": pairing code " + offer.Code + " issued", Pairing: &offer}, nil
	}
	return turn.AccessDenied{Reason: "unknown sender " + who + ": pairing code " + offer.Code + " still valid", Pairing: &offer}, nil
}

// notifyOwner tells the owner of a new request in their language and
// records that it did (or why it could not).
func (s *Service) notifyOwner(ctx context.Context, md domain.Metadata, r access.PairingRequest) {
	target := s.cfg.OwnerChannel + ":" + s.cfg.OwnerChat
	note := access.PairingOwnerNotified{Code: r.Code, Target: target}
	if err := s.send(ctx, s.cfg.OwnerChannel, s.cfg.OwnerChat, func(lang string) string {
		name := r.SenderName
		if name == "" {
			name = r.SenderID
		}
		return i18n.AccessText(lang, i18n.AccessOwnerRequest, name, r.Channel+":"+r.SenderID, r.Code, r.Code, r.Code)
	}, ""); err != nil {
		s.cfg.Logger.Warn("pairing: owner not told of a new request", "code", r.Code, "target", target, "err", err)
		note.Error = err.Error()
	}
	md.CausationID += "/owner"
	if _, err := s.update(ctx, md, func(access.SenderPairing) ([]domain.Payload, error) { return []domain.Payload{note}, nil }); err != nil {
		s.cfg.Logger.Warn("pairing: owner notice not recorded", "code", r.Code, "err", err)
	}
}

// errNoTarget: nowhere to send (no owner target, or no channels here).
var errNoTarget = errors.New("no destination")

// send delivers a text to a chat in the chat owner's language (their
// profile's, else fallback).
func (s *Service) send(ctx context.Context, channel, chat string, text func(lang string) string, fallback string) error {
	if channel == "" || chat == "" || s.cfg.Channels == nil {
		return errNoTarget
	}
	ch, ok := s.cfg.Channels.Channel(channel)
	if !ok {
		return fmt.Errorf("%w: channel %s not running", errNoTarget, channel)
	}
	lang := fallback
	if p, err := s.senders.Load(ctx, channel, chat); err == nil && p.Language != "" {
		lang = p.Language
	}
	_, err := ch.SendText(ctx, chat, text(i18n.OrDefault(lang)))
	return err
}

// decider returns the chat text of a decision error, or err when it is
// not one.
func decisionText(lang, code string, err error) (string, error) {
	switch {
	case errors.Is(err, access.ErrPairingUnknown):
		return i18n.AccessText(lang, i18n.AccessCodeUnknown, code), nil
	case errors.Is(err, access.ErrPairingExpired):
		return i18n.AccessText(lang, i18n.AccessCodeExpired, code), nil
	case errors.Is(err, access.ErrPairingDecided):
		return i18n.AccessText(lang, i18n.AccessCodeDecided, code), nil
	}
	return "", err
}

// Approve records the owner's approval of a code.
func (s *Service) Approve(ctx context.Context, md domain.Metadata, code, by string) (access.PairingRequest, error) {
	var r access.PairingRequest
	_, err := s.update(ctx, md, func(p access.SenderPairing) ([]domain.Payload, error) {
		var evs []domain.Payload
		var err error
		r, evs, err = p.Approve(s.cfg.Now(), code, by)
		return evs, messaging.Reject(err)
	})
	return r, err
}

// Reject records the owner's rejection of a code.
func (s *Service) Reject(ctx context.Context, md domain.Metadata, code, by string) (access.PairingRequest, error) {
	var r access.PairingRequest
	_, err := s.update(ctx, md, func(p access.SenderPairing) ([]domain.Payload, error) {
		var evs []domain.Payload
		var err error
		r, evs, err = p.Reject(s.cfg.Now(), code, by)
		return evs, messaging.Reject(err)
	})
	return r, err
}

// Revoke records that an approved sender is no longer allowed.
func (s *Service) Revoke(ctx context.Context, md domain.Metadata, who sender.SenderRef, by string) error {
	_, err := s.update(ctx, md, func(p access.SenderPairing) ([]domain.Payload, error) {
		evs, err := p.Revoke(who.Channel, who.ID, by)
		return evs, messaging.Reject(err)
	})
	return err
}

// Requests lists the pairing requests (pendingOnly: those waiting) and
// the approved senders.
func (s *Service) Requests(ctx context.Context, pendingOnly bool) ([]access.PairingRequest, []string, error) {
	st, err := s.pairing(ctx)
	if err != nil {
		return nil, nil, err
	}
	return st.List(s.cfg.Now(), pendingOnly), st.ApprovedSenders(), nil
}
