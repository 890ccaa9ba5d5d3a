// Package admit decides who may talk to omega: owner channels are
// trusted, everyone else must be on their channel's allowlist or paired
// with the owner's approval.
package admit

import (
	"context"
	"fmt"

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

// Decide is Auth.Decide with the senders the owner approved by pairing
// (pairing nil: none).
func Decide(ctx context.Context, a Auth, pairing PairingGate, m *turn.MessageReceived) (bool, string, error) {
	ok, reason := a.Decide(m)
	if ok || pairing == nil || !pairing.Applies(m) {
		return ok, reason, nil
	}
	paired, err := pairing.Approved(ctx, m)
	if err != nil || !paired {
		return false, reason, err
	}
	return true, "paired on " + m.Channel + " (approved by the owner)", nil
}
