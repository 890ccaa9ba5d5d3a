package access

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
)

// Sender pairing: an unknown sender on an allowlisted channel gets a short
// code; the owner approves or rejects it; an approved sender is allowed
// like one on the configured allowlist until revoked. (Not to be confused
// with WhatsApp device pairing, domain/whatsapp.go, which links omega's
// own WhatsApp account by QR code.)

// SenderPairingStream holds every pairing request, decision and
// revocation: one small stream, folded whole to decide.
const SenderPairingStream = "access-pairing"

// PairingCodeAlphabet has no characters that read alike (0/O, 1/I/L).
const PairingCodeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// PairingCodeLength is the number of characters of a pairing code.
const PairingCodeLength = 6

// NewPairingCode draws a code from random bytes (crypto/rand in
// production) without modulo bias.
func NewPairingCode(random io.Reader) (string, error) {
	const n = len(PairingCodeAlphabet)
	limit := 256 - 256%n // bytes at or above are redrawn
	out := make([]byte, 0, PairingCodeLength)
	buf := make([]byte, 16)
	for len(out) < PairingCodeLength {
		if _, err := io.ReadFull(random, buf); err != nil {
			return "", fmt.Errorf("pairing code: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < PairingCodeLength {
				out = append(out, PairingCodeAlphabet[int(b)%n])
			}
		}
	}
	return string(out), nil
}

// NormalizePairingCode is what a typed code is compared as: upper case,
// without spaces or dashes.
func NormalizePairingCode(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(s)))
}

// Sender pairing events, on SenderPairingStream.
type (
	// PairingRequested: an unknown sender was offered a code.
	PairingRequested struct {
		Code       string    `json:"code"`
		Channel    string    `json:"channel"`
		SenderID   string    `json:"sender_id"`
		SenderName string    `json:"sender_name,omitempty"`
		ChatID     string    `json:"chat_id"`
		TurnID     string    `json:"turn_id"`
		ExpiresAt  time.Time `json:"expires_at"`
		Language   string    `json:"language,omitempty"` // of the sender's message, for the approval notice
	}
	// PairingOwnerNotified: the owner was told of a request (Error when
	// the notice could not be delivered).
	PairingOwnerNotified struct {
		Code   string `json:"code"`
		Target string `json:"target"`
		Error  string `json:"error,omitempty"`
	}
	// PairingApproved: the owner let the code's sender in.
	PairingApproved struct {
		Code     string `json:"code"`
		Channel  string `json:"channel"`
		SenderID string `json:"sender_id"`
		By       string `json:"by"`
	}
	// PairingRejected: the owner refused the code's sender.
	PairingRejected struct {
		Code     string `json:"code"`
		Channel  string `json:"channel"`
		SenderID string `json:"sender_id"`
		By       string `json:"by"`
	}
	// PairingSenderNotified: a process took on telling the approved sender
	// (Error when the message could not be delivered).
	PairingSenderNotified struct {
		Code  string `json:"code"`
		Error string `json:"error,omitempty"`
	}
	// PairingRevoked: an approved sender is no longer allowed.
	PairingRevoked struct {
		Channel  string `json:"channel"`
		SenderID string `json:"sender_id"`
		By       string `json:"by"`
	}
)

func (PairingRequested) EventType() string      { return "PairingRequested" }
func (PairingOwnerNotified) EventType() string  { return "PairingOwnerNotified" }
func (PairingApproved) EventType() string       { return "PairingApproved" }
func (PairingRejected) EventType() string       { return "PairingRejected" }
func (PairingSenderNotified) EventType() string { return "PairingSenderNotified" }
func (PairingRevoked) EventType() string        { return "PairingRevoked" }

// RegisterAccessEvents adds the sender pairing and identity events.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{PairingRequested{}, PairingOwnerNotified{}, PairingApproved{}, PairingRejected{},
		PairingSenderNotified{}, PairingRevoked{}, identity.IdentityLinked{}, identity.IdentityUnlinked{}} {
		r.Register(p, 1)
	}
}

// Pairing decision errors.
var (
	ErrPairingUnknown     = errors.New("no such pairing code")
	ErrPairingExpired     = errors.New("pairing code expired")
	ErrPairingDecided     = errors.New("pairing code already decided")
	ErrPairingRateLimited = errors.New("too many pairing codes for this sender")
	ErrNotPaired          = errors.New("sender is not paired")
)

// Pairing request states.
const (
	PairingStatePending  = "pending"
	PairingStateApproved = "approved"
	PairingStateRejected = "rejected"
	PairingStateExpired  = "expired"
)

// PairingRequest is one code as the fold knows it.
type PairingRequest struct {
	PairingRequested
	RequestedAt   time.Time
	Decided       string // "", approved or rejected
	DecidedBy     string
	OwnerNotified bool
	SenderTold    bool
}

// State is the request's state at now.
func (r PairingRequest) State(now time.Time) string {
	switch {
	case r.Decided != "":
		return r.Decided
	case !now.Before(r.ExpiresAt):
		return PairingStateExpired
	}
	return PairingStatePending
}

// SenderPairing is SenderPairingStream folded.
type SenderPairing struct {
	Version  int64
	Requests map[string]*PairingRequest // by code
	Order    []string                   // codes in request order
	Approved map[string]string          // SenderKey -> approving code
}

// Apply folds one event.
func (s *SenderPairing) Apply(e domain.Payload, version int64, at time.Time) {
	s.Version = version
	switch ev := e.(type) {
	case PairingRequested:
		if s.Requests == nil {
			s.Requests = map[string]*PairingRequest{}
		}
		s.Requests[ev.Code] = &PairingRequest{PairingRequested: ev, RequestedAt: at}
		s.Order = append(s.Order, ev.Code)
	case PairingOwnerNotified:
		if r := s.Requests[ev.Code]; r != nil {
			r.OwnerNotified = true
		}
	case PairingApproved:
		if r := s.Requests[ev.Code]; r != nil {
			r.Decided, r.DecidedBy = PairingStateApproved, ev.By
		}
		s.Approved = domain.SetIn(s.Approved, sender.SenderKey(ev.Channel, ev.SenderID), ev.Code)
	case PairingRejected:
		if r := s.Requests[ev.Code]; r != nil {
			r.Decided, r.DecidedBy = PairingStateRejected, ev.By
		}
	case PairingSenderNotified:
		if r := s.Requests[ev.Code]; r != nil {
			r.SenderTold = true
		}
	case PairingRevoked:
		delete(s.Approved, sender.SenderKey(ev.Channel, ev.SenderID))
	}
}

// IsApproved reports whether the sender was approved and not revoked.
func (s SenderPairing) IsApproved(channel, senderID string) bool {
	_, ok := s.Approved[sender.SenderKey(channel, senderID)]
	return ok
}

// PairingPolicy bounds codes: how long one is valid and how many one
// sender may be given per hour.
type PairingPolicy struct {
	TTL        time.Duration
	MaxPerHour int
}

// PairingOffer is what an unknown sender is told: a code valid until
// ExpiresAt, or Limited when they asked for too many.
type PairingOffer struct {
	Code      string    `json:"code,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Fresh     bool      `json:"fresh,omitempty"` // a new code (the owner is told of it)
	Limited   bool      `json:"limited,omitempty"`
}

// Offer decides what an unknown sender's message gets: the code a turn
// was already given (a resumed turn), else the sender's code while it is
// valid, else a new code from newCode unless the sender had
// policy.MaxPerHour codes in the last hour.
func (s SenderPairing) Offer(now time.Time, req PairingRequested, policy PairingPolicy, newCode func() (string, error)) (PairingOffer, []domain.Payload, error) {
	recent := 0
	var valid *PairingRequest
	for _, code := range s.Order {
		r := s.Requests[code]
		if r.Channel != req.Channel || r.SenderID != req.SenderID {
			continue
		}
		if r.TurnID == req.TurnID {
			return PairingOffer{Code: r.Code, ExpiresAt: r.ExpiresAt, Fresh: true}, nil, nil
		}
		if r.State(now) == PairingStatePending {
			valid = r
		}
		if now.Sub(r.RequestedAt) < time.Hour {
			recent++
		}
	}
	if valid != nil {
		return PairingOffer{Code: valid.Code, ExpiresAt: valid.ExpiresAt}, nil, nil
	}
	if policy.MaxPerHour > 0 && recent >= policy.MaxPerHour {
		return PairingOffer{Limited: true}, nil, nil
	}
	code, err := s.unusedCode(newCode)
	if err != nil {
		return PairingOffer{}, nil, err
	}
	req.Code, req.ExpiresAt = code, now.Add(policy.TTL)
	return PairingOffer{Code: code, ExpiresAt: req.ExpiresAt, Fresh: true}, []domain.Payload{req}, nil
}

// unusedCode draws codes until one was never given (a few tries; the code
// space is 31^6).
func (s SenderPairing) unusedCode(newCode func() (string, error)) (string, error) {
	for range 8 {
		code, err := newCode()
		if err != nil {
			return "", err
		}
		if _, taken := s.Requests[code]; !taken {
			return code, nil
		}
	}
	return "", errors.New("pairing code: no unused code drawn")
}

// find returns the pending request of a typed code, or why there is none.
func (s SenderPairing) find(now time.Time, code string) (*PairingRequest, error) {
	code = NormalizePairingCode(code)
	r := s.Requests[code]
	switch {
	case r == nil:
		return nil, fmt.Errorf("%w: %s", ErrPairingUnknown, code)
	case r.Decided != "":
		return r, fmt.Errorf("%w: %s was %s", ErrPairingDecided, code, r.Decided)
	case r.State(now) == PairingStateExpired:
		return r, fmt.Errorf("%w: %s", ErrPairingExpired, code)
	}
	return r, nil
}

// Approve decides the approval of a pending, unexpired code.
func (s SenderPairing) Approve(now time.Time, code, by string) (PairingRequest, []domain.Payload, error) {
	r, err := s.find(now, code)
	if err != nil {
		return deref(r), nil, err
	}
	return *r, []domain.Payload{PairingApproved{Code: r.Code, Channel: r.Channel, SenderID: r.SenderID, By: by}}, nil
}

// Reject decides the rejection of a pending, unexpired code.
func (s SenderPairing) Reject(now time.Time, code, by string) (PairingRequest, []domain.Payload, error) {
	r, err := s.find(now, code)
	if err != nil {
		return deref(r), nil, err
	}
	return *r, []domain.Payload{PairingRejected{Code: r.Code, Channel: r.Channel, SenderID: r.SenderID, By: by}}, nil
}

// Revoke decides the revocation of an approved sender.
func (s SenderPairing) Revoke(channel, senderID, by string) ([]domain.Payload, error) {
	if !s.IsApproved(channel, senderID) {
		return nil, fmt.Errorf("%w: %s:%s", ErrNotPaired, channel, senderID)
	}
	return []domain.Payload{PairingRevoked{Channel: channel, SenderID: senderID, By: by}}, nil
}

func deref(r *PairingRequest) PairingRequest {
	if r == nil {
		return PairingRequest{}
	}
	return *r
}

// List returns the requests in request order; pendingOnly keeps those
// still waiting for the owner.
func (s SenderPairing) List(now time.Time, pendingOnly bool) []PairingRequest {
	var out []PairingRequest
	for _, code := range s.Order {
		r := s.Requests[code]
		if pendingOnly && r.State(now) != PairingStatePending {
			continue
		}
		out = append(out, *r)
	}
	return out
}

// ToTell lists approved requests whose sender was not told yet.
func (s SenderPairing) ToTell() []PairingRequest {
	var out []PairingRequest
	for _, code := range s.Order {
		if r := s.Requests[code]; r.Decided == PairingStateApproved && !r.SenderTold {
			out = append(out, *r)
		}
	}
	return out
}

// ApprovedSenders lists the approved senders as "channel:id", sorted.
func (s SenderPairing) ApprovedSenders() []string {
	out := make([]string, 0, len(s.Approved))
	for _, code := range s.Approved {
		if r := s.Requests[code]; r != nil {
			out = append(out, r.Channel+":"+r.SenderID)
		}
	}
	sort.Strings(out)
	return out
}
