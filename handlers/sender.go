package handlers

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/messaging"
)

// Profile adapts the domain's sender profile to the Folder interface.
type Profile struct{ domain.SenderProfile }

func (p *Profile) Apply(pl domain.Payload, version int64, e domain.Event) {
	p.SenderProfile.Apply(pl, version, e.RecordedAt)
}

// Sender profile commands. Each names the sender by channel and id.
type (
	RecordFact struct {
		Channel, SenderID, Key, Value, Source string
		Meta                                  domain.Metadata
	}
	RemoveFact struct {
		Channel, SenderID, Key string
		Meta                   domain.Metadata
	}
	PurgeFacts struct {
		Channel, SenderID string
		Meta              domain.Metadata
	}
	SwitchLanguage struct {
		Channel, SenderID, Language string
		Meta                        domain.Metadata
	}
	SetPersonality struct {
		Channel, SenderID, Personality string
		Meta                           domain.Metadata
	}
)

func (RecordFact) CommandName() string     { return "RecordFact" }
func (RemoveFact) CommandName() string     { return "RemoveFact" }
func (PurgeFacts) CommandName() string     { return "PurgeFacts" }
func (SwitchLanguage) CommandName() string { return "SwitchLanguage" }
func (SetPersonality) CommandName() string { return "SetPersonality" }

// Senders handles the sender profile aggregate.
type Senders struct {
	Store    eventstore.Store
	Registry *domain.Registry
}

// Resolve returns the identity whose profile the sender uses: the
// canonical identity the owner linked it to (/link), else itself.
func (s Senders) Resolve(ctx context.Context, channel, senderID string) (domain.SenderRef, error) {
	var ids domain.Identities
	if _, err := eventstore.Fold(ctx, s.Store, s.Registry, domain.IdentityStream, &ids); err != nil {
		return domain.SenderRef{}, err
	}
	return ids.Resolve(domain.SenderRef{Channel: channel, ID: senderID}), nil
}

// ProfileStream is the stream holding the sender's profile (see Resolve).
func (s Senders) ProfileStream(ctx context.Context, channel, senderID string) (string, error) {
	r, err := s.Resolve(ctx, channel, senderID)
	return r.Stream(), err
}

// Load returns a sender's current profile.
func (s Senders) Load(ctx context.Context, channel, senderID string) (domain.SenderProfile, error) {
	var p Profile
	stream, err := s.ProfileStream(ctx, channel, senderID)
	if err != nil {
		return domain.SenderProfile{}, err
	}
	if _, err := LoadState(ctx, s.Store, s.Registry, stream, &p); err != nil {
		return domain.SenderProfile{}, err
	}
	return p.SenderProfile, nil
}

// Decide runs a decision on a sender's profile and records its events.
func (s Senders) Decide(ctx context.Context, channel, senderID string, md domain.Metadata, decide func(domain.SenderProfile) ([]domain.Payload, error)) (domain.SenderProfile, error) {
	if md.Channel == "" {
		md.Channel = channel
	}
	if md.Sender == "" {
		md.Sender = senderID
	}
	stream, err := s.ProfileStream(ctx, channel, senderID)
	if err != nil {
		return domain.SenderProfile{}, err
	}
	p, _, err := Update(ctx, s.Store, s.Registry, stream, md,
		func() *Profile { return &Profile{} },
		func(p *Profile) ([]domain.Payload, error) {
			evs, err := decide(p.SenderProfile)
			// A decision that said no says no again when retried.
			return evs, messaging.Reject(err)
		})
	if err != nil {
		return domain.SenderProfile{}, fmt.Errorf("sender %s/%s: %w", channel, senderID, err)
	}
	return p.SenderProfile, nil
}

func (s Senders) RecordFact(ctx context.Context, c *RecordFact) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.RecordFact(c.Key, c.Value, c.Source)
	})
	return err
}

func (s Senders) RemoveFact(ctx context.Context, c *RemoveFact) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.RemoveFact(c.Key), nil
	})
	return err
}

func (s Senders) PurgeFacts(ctx context.Context, c *PurgeFacts) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.PurgeFacts(), nil
	})
	return err
}

func (s Senders) SwitchLanguage(ctx context.Context, c *SwitchLanguage) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.SwitchLanguage(c.Language), nil
	})
	return err
}

func (s Senders) SetPersonality(ctx context.Context, c *SetPersonality) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.SetPersonality(c.Personality), nil
	})
	return err
}

// CommandHandlers exposes the sender commands to the command bus.
func (s Senders) CommandHandlers() []cqrs.CommandHandler {
	return []cqrs.CommandHandler{
		cqrs.NewCommandHandler("RecordFact", s.RecordFact),
		cqrs.NewCommandHandler("RemoveFact", s.RemoveFact),
		cqrs.NewCommandHandler("PurgeFacts", s.PurgeFacts),
		cqrs.NewCommandHandler("SwitchLanguage", s.SwitchLanguage),
		cqrs.NewCommandHandler("SetPersonality", s.SetPersonality),
	}
}
