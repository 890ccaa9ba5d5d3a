package slash

import (
	"context"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/senders"
)

func (c *Commands) personality(ctx context.Context, call *cmdCall, arg string) (string, error) {
	p, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.SetPersonality(arg) })
	if err != nil {
		return "", err
	}
	if p.Personality == "" {
		return i18n.Text(call.lang, i18n.PersonalityReset), nil
	}
	return i18n.Text(call.lang, i18n.PersonalitySet, p.Personality), nil
}

// onSender records a decision on the sender's profile, once per turn.
func (c *Commands) onSender(ctx context.Context, call *cmdCall, decide func(sender.SenderProfile) []domain.Payload) (sender.SenderProfile, error) {
	return c.onProfile(ctx, call, call.turn.Received.Sender(), decide)
}

// onProfile records a decision on ref's profile, once per turn.
func (c *Commands) onProfile(ctx context.Context, call *cmdCall, ref sender.SenderRef, decide func(sender.SenderProfile) []domain.Payload) (sender.SenderProfile, error) {
	profiles, err := senders.New(c.Store(), c.Registry())
	if err != nil {
		return sender.SenderProfile{}, err
	}
	stream, err := profiles.ProfileStream(ctx, ref.Channel, ref.ID)
	if err != nil {
		return sender.SenderProfile{}, err
	}
	p := &sender.SenderProfile{}
	if _, err := c.Once(ctx, stream, call.md, func() eventstore.Aggregate { p = &sender.SenderProfile{}; return p },
		func() ([]domain.Payload, error) { return decide(*p), nil }); err != nil {
		return sender.SenderProfile{}, err
	}
	return *p, nil
}

func (c *Commands) language(ctx context.Context, call *cmdCall, arg string) (string, error) {
	supported := strings.Join(i18n.Languages(), ", ")
	if arg == "" {
		return i18n.More(call.lang, i18n.LanguageCurrent, call.lang, supported), nil
	}
	lang, ok := i18n.Normalize(arg)
	if !ok {
		return i18n.Text(call.lang, i18n.LanguageUnsupported, arg, supported), nil
	}
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.SwitchLanguage(lang) }); err != nil {
		return "", err
	}
	return i18n.Text(lang, i18n.LanguageSwitched, lang), nil
}
