// Package senders handles the sender profile aggregate: facts, language
// and personality, changed by commands on the bus or by the turn's
// markers and slash commands.
package senders

import (
	"context"
	"errors"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
)

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

// Service handles the sender profile aggregate.
type Service struct {
	store    eventstore.Store
	registry *domain.Registry
}

// New returns the sender profile service over store.
func New(store eventstore.Store, reg *domain.Registry) (Service, error) {
	if store == nil || reg == nil {
		return Service{}, errors.New("senders: a store and a registry are required")
	}
	return Service{store: store, registry: reg}, nil
}

// Resolve returns the identity whose profile the sender uses: the
// canonical identity the owner linked it to (/link), else itself.
func (s Service) Resolve(ctx context.Context, channel, senderID string) (sender.SenderRef, error) {
	return s.resolveUntil(ctx, channel, senderID, nil)
}

// resolveUntil is Resolve with the links as they stood before the first
// event keep refuses (nil: now).
func (s Service) resolveUntil(ctx context.Context, channel, senderID string, keep func(domain.Event) bool) (sender.SenderRef, error) {
	var ids identity.Identities
	if _, err := eventstore.FoldUntil(ctx, s.store, s.registry, identity.IdentityStream, &ids, keep); err != nil {
		return sender.SenderRef{}, err
	}
	return ids.Resolve(sender.SenderRef{Channel: channel, ID: senderID}), nil
}

// ProfileStream is the stream holding the sender's profile (see Resolve).
func (s Service) ProfileStream(ctx context.Context, channel, senderID string) (string, error) {
	r, err := s.Resolve(ctx, channel, senderID)
	return r.Stream(), err
}

// Load returns a sender's current profile.
func (s Service) Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error) {
	p, _, err := s.LoadUntil(ctx, channel, senderID, nil)
	return p, err
}

// LoadUntil returns the profile a turn would have loaded before the first
// event keep refuses (nil: Load), and the identity whose profile it is:
// the links and the profile stream folded by the same code, stopped there.
func (s Service) LoadUntil(ctx context.Context, channel, senderID string, keep func(domain.Event) bool) (sender.SenderProfile, sender.SenderRef, error) {
	var p sender.SenderProfile
	ref, err := s.resolveUntil(ctx, channel, senderID, keep)
	if err != nil {
		return sender.SenderProfile{}, ref, err
	}
	if _, err := eventstore.FoldUntil(ctx, s.store, s.registry, ref.Stream(), &p, keep); err != nil {
		return sender.SenderProfile{}, ref, err
	}
	return p, ref, nil
}

// Decide runs a decision on a sender's profile and records its events.
func (s Service) Decide(ctx context.Context, channel, senderID string, md domain.Metadata, decide func(sender.SenderProfile) ([]domain.Payload, error)) (sender.SenderProfile, error) {
	if md.Channel == "" {
		md.Channel = channel
	}
	if md.Sender == "" {
		md.Sender = senderID
	}
	stream, err := s.ProfileStream(ctx, channel, senderID)
	if err != nil {
		return sender.SenderProfile{}, err
	}
	p, _, err := eventstore.Update(ctx, s.store, s.registry, stream, md,
		func() *sender.SenderProfile { return &sender.SenderProfile{} },
		func(p *sender.SenderProfile) ([]domain.Payload, error) {
			evs, err := decide(*p)
			// A decision that said no says no again when retried.
			return evs, messaging.Reject(err)
		})
	if err != nil {
		return sender.SenderProfile{}, fmt.Errorf("sender %s/%s: %w", channel, senderID, err)
	}
	return *p, nil
}

func (s Service) RecordFact(ctx context.Context, c *RecordFact) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.RecordFact(c.Key, c.Value, c.Source)
	})
	return err
}

func (s Service) RemoveFact(ctx context.Context, c *RemoveFact) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.RemoveFact(c.Key), nil
	})
	return err
}

func (s Service) PurgeFacts(ctx context.Context, c *PurgeFacts) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.PurgeFacts(), nil
	})
	return err
}

func (s Service) SwitchLanguage(ctx context.Context, c *SwitchLanguage) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.SwitchLanguage(c.Language), nil
	})
	return err
}

func (s Service) SetPersonality(ctx context.Context, c *SetPersonality) error {
	_, err := s.Decide(ctx, c.Channel, c.SenderID, c.Meta, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.SetPersonality(c.Personality), nil
	})
	return err
}

// CommandHandlers exposes the sender commands to the command bus.
func (s Service) CommandHandlers() []cqrs.CommandHandler {
	return []cqrs.CommandHandler{
		cqrs.NewCommandHandler("RecordFact", s.RecordFact),
		cqrs.NewCommandHandler("RemoveFact", s.RemoveFact),
		cqrs.NewCommandHandler("PurgeFacts", s.PurgeFacts),
		cqrs.NewCommandHandler("SwitchLanguage", s.SwitchLanguage),
		cqrs.NewCommandHandler("SetPersonality", s.SetPersonality),
	}
}

// MustNew is New for wiring whose store and registry are known to be
// present (tests, a runtime that has just opened them); it panics on error.
func MustNew(store eventstore.Store, reg *domain.Registry) Service {
	s, err := New(store, reg)
	if err != nil {
		panic(err)
	}
	return s
}
