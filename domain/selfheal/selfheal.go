package selfheal

import (
	"cmp"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/usage"
)

// SelfHealStream holds the single self-healing effort.
const SelfHealStream = "selfheal"

// Self-healing events.
type (
	SelfHealStarted struct {
		Description  string `json:"description"`
		Verification string `json:"verification,omitempty"`
	}
	SelfHealIterated struct {
		Iteration    int    `json:"iteration"`
		Description  string `json:"description"`
		Verification string `json:"verification,omitempty"`
	}
	// SelfHealEscalated: the iteration limit was reached; the owner must act.
	SelfHealEscalated struct {
		Iterations  int    `json:"iterations"`
		Description string `json:"description"`
	}
	SelfHealResolved struct {
		Iterations int `json:"iterations"`
	}
	// SelfHealFollowUpStarted claims an iteration's follow-up call.
	SelfHealFollowUpStarted struct {
		Effort    int64  `json:"effort"`
		Iteration int    `json:"iteration"`
		Prompt    string `json:"prompt"`
	}
	// SelfHealFollowUpReplied records the reply before its markers are
	// applied; Error is set when the call failed.
	SelfHealFollowUpReplied struct {
		Effort    int64            `json:"effort"`
		Iteration int              `json:"iteration"`
		Raw       string           `json:"raw,omitempty"`
		Error     string           `json:"error,omitempty"`
		Usage     *usage.CallUsage `json:"usage,omitempty"`
	}
	SelfHealFollowUpDone struct {
		Effort    int64                   `json:"effort"`
		Iteration int                     `json:"iteration"`
		Markers   []markers.AppliedMarker `json:"markers,omitempty"`
	}
	// SelfHealOwnerNotified: the escalation was sent to the owner (or
	// could not be: Error).
	SelfHealOwnerNotified struct {
		Text  string `json:"text"`
		Error string `json:"error,omitempty"`
	}
)

func (SelfHealStarted) EventType() string         { return "SelfHealStarted" }
func (SelfHealIterated) EventType() string        { return "SelfHealIterated" }
func (SelfHealEscalated) EventType() string       { return "SelfHealEscalated" }
func (SelfHealResolved) EventType() string        { return "SelfHealResolved" }
func (SelfHealFollowUpStarted) EventType() string { return "SelfHealFollowUpStarted" }
func (SelfHealFollowUpReplied) EventType() string { return "SelfHealFollowUpReplied" }
func (SelfHealFollowUpDone) EventType() string    { return "SelfHealFollowUpDone" }
func (SelfHealOwnerNotified) EventType() string   { return "SelfHealOwnerNotified" }

// RegisterSelfHealEvents adds the self-healing events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{SelfHealStarted{}, SelfHealIterated{}, SelfHealEscalated{}, SelfHealResolved{}, SelfHealFollowUpStarted{}, SelfHealFollowUpReplied{}, SelfHealFollowUpDone{}, SelfHealOwnerNotified{}} {
		r.Register(p, 1)
	}
}

// MaxSelfHealIterations bounds self-healing: after this many attempts the
// owner is alerted instead of trying again.
const MaxSelfHealIterations = 10

// SelfHeal is the state of the single self-healing effort.
type SelfHeal struct {
	Version      int64
	Active       bool
	Escalated    bool
	Iteration    int
	Description  string
	Verification string
	// Effort is the version of the SelfHealStarted that opened the effort:
	// it keys the follow-ups of one effort apart from the next one's.
	Effort int64
	// Changed is when the effort last started or iterated; a follow-up
	// falls due a delay after it.
	Changed time.Time
	// Attempts are the descriptions of each iteration, in order.
	Attempts []string
	// FollowUp is the follow-up of the current iteration, if started.
	FollowUp *SelfHealFollowUp
	// Notified: the owner was told of the escalation.
	Notified bool
}

// SelfHealFollowUp is the progress of one iteration's follow-up call.
type SelfHealFollowUp struct {
	Iteration int
	Replied   bool
	Raw       string
	Done      bool
}

func (s *SelfHeal) Apply(p domain.Payload, version int64, at time.Time) {
	s.Version = version
	switch e := p.(type) {
	case SelfHealStarted:
		*s = SelfHeal{Version: version, Active: true, Iteration: 1, Description: e.Description,
			Verification: e.Verification, Effort: version, Changed: at, Attempts: []string{e.Description}}
	case SelfHealIterated:
		s.Iteration, s.Description, s.Changed = e.Iteration, e.Description, at
		s.Verification = cmp.Or(e.Verification, s.Verification)
		s.Attempts = append(s.Attempts, e.Description)
	case SelfHealEscalated:
		s.Escalated = true
	case SelfHealResolved:
		*s = SelfHeal{Version: version}
	case SelfHealFollowUpStarted:
		if e.Effort == s.Effort {
			s.FollowUp = &SelfHealFollowUp{Iteration: e.Iteration}
		}
	case SelfHealFollowUpReplied:
		if f := s.followUpOf(e.Effort, e.Iteration); f != nil {
			f.Replied, f.Raw = true, e.Raw
		}
	case SelfHealFollowUpDone:
		if f := s.followUpOf(e.Effort, e.Iteration); f != nil {
			f.Done = true
		}
	case SelfHealOwnerNotified:
		s.Notified = true
	}
}

// followUpOf returns the follow-up in progress if it is the one of that
// effort's iteration, else nil: a late event of an earlier effort or
// iteration changes nothing.
func (s *SelfHeal) followUpOf(effort int64, iteration int) *SelfHealFollowUp {
	if f := s.FollowUp; f != nil && effort == s.Effort && f.Iteration == iteration {
		return f
	}
	return nil
}

// FollowUpDue says whether the current iteration still needs its
// follow-up and when it falls due.
func (s SelfHeal) FollowUpDue(delay time.Duration) (time.Time, bool) {
	if !s.Active || s.Escalated || (s.FollowUp != nil && s.FollowUp.Iteration == s.Iteration) {
		return time.Time{}, false
	}
	return s.Changed.Add(delay), true
}

// Heal decides the next self-healing step: start, iterate, or escalate
// once the limit is reached (and nothing more after that).
func (s SelfHeal) Heal(description, verification string) []domain.Payload {
	description = strings.TrimSpace(description)
	switch {
	case description == "":
		return nil
	case !s.Active:
		return []domain.Payload{SelfHealStarted{Description: description, Verification: verification}}
	case s.Escalated:
		return nil
	case s.Iteration >= MaxSelfHealIterations:
		return []domain.Payload{SelfHealEscalated{Iterations: s.Iteration, Description: description}}
	}
	return []domain.Payload{SelfHealIterated{Iteration: s.Iteration + 1, Description: description, Verification: verification}}
}

// Resolve decides ending the self-healing effort.
func (s SelfHeal) Resolve() []domain.Payload {
	if !s.Active {
		return nil
	}
	return []domain.Payload{SelfHealResolved{Iterations: s.Iteration}}
}

// ProviderCall is the provider call the event records.
func (e SelfHealFollowUpReplied) ProviderCall() (usage.ProviderCall, bool) {
	return usage.CalledCall(usage.PurposeSelfHeal, e.Usage, e.Error != "")
}
