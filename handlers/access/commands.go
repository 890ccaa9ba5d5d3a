package access

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
)

// Commands on the bus, sent by the command line (`omega pairing ...`).
type (
	ApprovePairing struct{ Code, By string }
	RejectPairing  struct{ Code, By string }
	RevokePairing  struct {
		Channel, SenderID, By string
	}
	LinkIdentities struct{ Canonical, Alias, By string }
	UnlinkIdentity struct{ Identity, By string }
)

func (ApprovePairing) CommandName() string { return "ApprovePairing" }
func (RejectPairing) CommandName() string  { return "RejectPairing" }
func (RevokePairing) CommandName() string  { return "RevokePairing" }
func (LinkIdentities) CommandName() string { return "LinkIdentities" }
func (UnlinkIdentity) CommandName() string { return "UnlinkIdentity" }

// CommandHandlers exposes pairing and link decisions to the command bus.
func (s *Service) CommandHandlers() []cqrs.CommandHandler {
	cli := domain.Metadata{CorrelationID: "cli", Channel: "cli"}
	return []cqrs.CommandHandler{
		cqrs.NewCommandHandler("ApprovePairing", func(ctx context.Context, c *ApprovePairing) error {
			_, err := s.Approve(ctx, cli, c.Code, c.By)
			return err
		}),
		cqrs.NewCommandHandler("RejectPairing", func(ctx context.Context, c *RejectPairing) error {
			_, err := s.Reject(ctx, cli, c.Code, c.By)
			return err
		}),
		cqrs.NewCommandHandler("RevokePairing", func(ctx context.Context, c *RevokePairing) error {
			return s.Revoke(ctx, cli, sender.SenderRef{Channel: c.Channel, ID: c.SenderID}, c.By)
		}),
		cqrs.NewCommandHandler("LinkIdentities", func(ctx context.Context, c *LinkIdentities) error {
			return s.link(ctx, cli, c.Canonical, c.Alias, c.By)
		}),
		cqrs.NewCommandHandler("UnlinkIdentity", func(ctx context.Context, c *UnlinkIdentity) error {
			return s.unlink(ctx, cli, c.Identity, c.By)
		}),
	}
}

func turnMeta(tn *turn.Turn) domain.Metadata {
	m := tn.Received
	return domain.Metadata{CorrelationID: tn.ID, CausationID: tn.ID + "/access", Channel: m.Channel, Sender: m.SenderID}
}

func by(tn *turn.Turn) string { return tn.Received.Channel + ":" + tn.Received.SenderID }

// Pair answers /pair list|approve CODE|reject CODE|revoke channel:id,
// for the owner only.
func (s *Service) Pair(ctx context.Context, tn *turn.Turn, lang, arg string) (string, error) {
	if !s.IsOwner(tn.Received) {
		return i18n.AccessText(lang, i18n.AccessOwnerOnly), nil
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(arg), " ")
	rest = strings.TrimSpace(rest)
	md := turnMeta(tn)
	switch strings.ToLower(verb) {
	case "", "list":
		return s.pendingText(ctx, lang)
	case "approve", "reject":
		if rest == "" {
			return i18n.AccessText(lang, i18n.AccessPairUsage), nil
		}
		return s.decideText(ctx, md, lang, rest, strings.EqualFold(verb, "approve"), by(tn))
	case "revoke":
		who, perr := identity.ParseIdentity(rest)
		if perr != nil { // a typo: show the usage
			return i18n.AccessText(lang, i18n.AccessPairUsage), nil //nolint:nilerr // answered, not failed
		}
		if err := s.Revoke(ctx, md, who, by(tn)); errors.Is(err, access.ErrNotPaired) {
			return i18n.AccessText(lang, i18n.AccessNotPaired, rest), nil
		} else if err != nil {
			return "", err
		}
		return i18n.AccessText(lang, i18n.AccessRevoked, who.Channel+":"+who.ID), nil
	}
	return i18n.AccessText(lang, i18n.AccessPairUsage), nil
}

func (s *Service) decideText(ctx context.Context, md domain.Metadata, lang, code string, approve bool, who string) (string, error) {
	decide, key := s.Reject, i18n.AccessRejected
	if approve {
		decide, key = s.Approve, i18n.AccessApproved
	}
	r, err := decide(ctx, md, code, who)
	if err != nil {
		return decisionText(lang, access.NormalizePairingCode(code), err)
	}
	return i18n.AccessText(lang, key, r.Channel+":"+r.SenderID, r.Code), nil
}

func (s *Service) pendingText(ctx context.Context, lang string) (string, error) {
	pending, _, err := s.Requests(ctx, true)
	if err != nil {
		return "", err
	}
	if len(pending) == 0 {
		return i18n.AccessText(lang, i18n.AccessPairNone), nil
	}
	lines := make([]string, len(pending))
	for i, r := range pending {
		lines[i] = fmt.Sprintf("- %s: %s (%s:%s), %s", r.Code, nameOf(r), r.Channel, r.SenderID,
			i18n.PairingExpiry(r.ExpiresAt, s.cfg.Location))
	}
	return i18n.AccessText(lang, i18n.AccessPairList, strings.Join(lines, "\n")), nil
}

func nameOf(r access.PairingRequest) string {
	if r.SenderName != "" {
		return r.SenderName
	}
	return "?"
}

// identities runs a decision on the identity links stream.
func (s *Service) identities(ctx context.Context, md domain.Metadata, decide func(identity.Identities) ([]domain.Payload, error)) (identity.Identities, error) {
	st, _, err := eventstore.Update(ctx, s.cfg.Store, s.cfg.Registry, identity.IdentityStream, md,
		func() *identity.Identities { return &identity.Identities{} },
		func(p *identity.Identities) ([]domain.Payload, error) {
			evs, err := decide(*p)
			return evs, messaging.Reject(err)
		})
	return *st, err
}

func (s *Service) link(ctx context.Context, md domain.Metadata, canonical, alias, who string) error {
	c, err := identity.ParseIdentity(canonical)
	if err != nil {
		return messaging.Reject(err)
	}
	a, err := identity.ParseIdentity(alias)
	if err != nil {
		return messaging.Reject(err)
	}
	_, err = s.identities(ctx, md, func(ids identity.Identities) ([]domain.Payload, error) { return ids.Link(c, a, who) })
	return err
}

func (s *Service) unlink(ctx context.Context, md domain.Metadata, ident, who string) error {
	r, err := identity.ParseIdentity(ident)
	if err != nil {
		return messaging.Reject(err)
	}
	_, err = s.identities(ctx, md, func(ids identity.Identities) ([]domain.Payload, error) { return ids.Unlink(r, who) })
	return err
}

// Links lists "alias → canonical" lines.
func (s *Service) Links(ctx context.Context) ([]string, error) {
	var st identity.Identities
	if _, err := eventstore.Fold(ctx, s.cfg.Store, s.cfg.Registry, identity.IdentityStream, &st); err != nil {
		return nil, err
	}
	return st.List(), nil
}

// Link answers /link A B (B shares A's profile), /link list and
// /link remove X, for the owner only.
func (s *Service) Link(ctx context.Context, tn *turn.Turn, lang, arg string) (string, error) {
	if !s.IsOwner(tn.Received) {
		return i18n.AccessText(lang, i18n.AccessOwnerOnly), nil
	}
	fields := strings.Fields(arg)
	md := turnMeta(tn)
	switch {
	case len(fields) == 0 || (len(fields) == 1 && strings.EqualFold(fields[0], "list")):
		links, err := s.Links(ctx)
		if err != nil || len(links) == 0 {
			return i18n.AccessText(lang, i18n.LinkNone), err
		}
		return i18n.AccessText(lang, i18n.LinkList, "- "+strings.Join(links, "\n- ")), nil
	case len(fields) == 2 && (strings.EqualFold(fields[0], "remove") || strings.EqualFold(fields[0], "unlink")):
		if err := s.unlink(ctx, md, fields[1], by(tn)); err != nil {
			return refused(lang, err)
		}
		return i18n.AccessText(lang, i18n.LinkUndone, fields[1]), nil
	case len(fields) == 2:
		if err := s.link(ctx, md, fields[0], fields[1], by(tn)); err != nil {
			return refused(lang, err)
		}
		return i18n.AccessText(lang, i18n.LinkDone, fields[1], fields[0]), nil
	}
	return i18n.AccessText(lang, i18n.LinkUsage), nil
}

// refused answers a link decision that said no; other errors fail.
func refused(lang string, err error) (string, error) {
	var no *messaging.RejectedError
	if errors.As(err, &no) {
		return i18n.AccessText(lang, i18n.LinkRefused, no.Err.Error()) + "\n" + i18n.AccessText(lang, i18n.LinkUsage), nil
	}
	return "", err
}

// idlePoll bounds how long an approval can wait for its notice when a
// change signal is lost.
const idlePoll = time.Minute

// Run tells approved senders that they may talk now, whichever process
// (chat or command line) recorded the approval, until ctx ends. Each
// notice is claimed on the pairing stream before it is sent, so one
// process sends it once.
func (s *Service) Run(ctx context.Context) error {
	changes := s.cfg.Store.Changes(ctx)
	tick := time.NewTicker(idlePoll)
	defer tick.Stop()
	seen := int64(-1)
	for {
		v, err := s.cfg.Store.StreamVersion(ctx, access.SenderPairingStream)
		if err == nil && v != seen {
			if err = s.tellApproved(ctx); err == nil {
				seen = v
			}
		}
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("pairing: approval notices deferred", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
		case <-tick.C:
		}
	}
}

func (s *Service) tellApproved(ctx context.Context) error {
	st, err := s.pairing(ctx)
	if err != nil {
		return err
	}
	for _, r := range st.ToTell() {
		if err := s.tell(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// tell claims one approval's notice and sends it.
func (s *Service) tell(ctx context.Context, r access.PairingRequest) error {
	md := domain.Metadata{CorrelationID: r.TurnID, CausationID: "notify/" + r.Code, Channel: r.Channel, Sender: r.SenderID}
	claimed := false
	_, err := s.update(ctx, md, func(p access.SenderPairing) ([]domain.Payload, error) {
		cur := p.Requests[r.Code]
		if claimed = cur != nil && cur.Decided == access.PairingStateApproved && !cur.SenderTold; !claimed {
			return nil, nil
		}
		return []domain.Payload{access.PairingSenderNotified{Code: r.Code}}, nil
	})
	if err != nil || !claimed {
		return err
	}
	if err := s.send(ctx, r.Channel, r.ChatID, func(lang string) string {
		return i18n.AccessText(lang, i18n.AccessApprovedSender)
	}, r.Language); err != nil {
		s.cfg.Logger.Warn("pairing: approved sender not told", "code", r.Code, "sender", r.Channel+":"+r.SenderID, "err", err)
	}
	return nil
}
