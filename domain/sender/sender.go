package sender

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/omega-gateway/omega/domain"
)

// SenderStream names the stream of one sender on one channel:
// "sender-" and the sender's key (bounded, see SenderKey).
func SenderStream(channel, senderID string) string {
	return "sender-" + SenderKey(channel, senderID)
}

// IsSenderStream reports whether stream is a sender's (SenderStream).
func IsSenderStream(stream string) bool { return strings.HasPrefix(stream, "sender-") }

// Sender profile events.
type (
	// Welcomed records the first contact and the language it was greeted in.
	Welcomed struct {
		Name     string `json:"name,omitempty"`
		Language string `json:"language"`
		TurnID   string `json:"turn_id,omitempty"` // the turn that greeted
	}
	// FactRecorded stores (or replaces) one fact about the sender.
	FactRecorded struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Source string `json:"source,omitempty"` // "user", "summarizer", "marker"
	}
	// FactRemoved deletes one fact.
	FactRemoved struct {
		Key string `json:"key"`
	}
	// FactsPurged deletes every fact the sender had.
	FactsPurged struct {
		Count int `json:"count"`
	}
	// LanguageSwitched changes the language replies and status texts use.
	LanguageSwitched struct {
		From string `json:"from,omitempty"`
		To   string `json:"to"`
	}
	// PersonalitySet changes how the assistant behaves; empty resets it.
	PersonalitySet struct {
		Personality string `json:"personality"`
	}
	// SessionStarted records the provider session a (sender, project)
	// conversation continues in.
	SessionStarted struct {
		Project   string `json:"project,omitempty"`
		SessionID string `json:"session_id"`
		Provider  string `json:"provider"`
	}
	// SessionCleared forgets a provider session (forget, project switch,
	// failed resume).
	SessionCleared struct {
		Project string `json:"project,omitempty"`
		Reason  string `json:"reason"`
	}
	ProjectActivated struct {
		Project string `json:"project"`
	}
	ProjectDeactivated struct {
		Project string `json:"project"`
	}
)

func (Welcomed) EventType() string         { return "Welcomed" }
func (FactRecorded) EventType() string     { return "FactRecorded" }
func (FactRemoved) EventType() string      { return "FactRemoved" }
func (FactsPurged) EventType() string      { return "FactsPurged" }
func (LanguageSwitched) EventType() string { return "LanguageSwitched" }
func (PersonalitySet) EventType() string   { return "PersonalitySet" }
func (SessionStarted) EventType() string   { return "SessionStarted" }
func (SessionCleared) EventType() string   { return "SessionCleared" }
func (ProjectActivated) EventType() string { return "ProjectActivated" }
func (ProjectDeactivated) EventType() string {
	return "ProjectDeactivated"
}

// RegisterSenderEvents adds the sender profile events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{Welcomed{}, FactRecorded{}, FactRemoved{}, FactsPurged{}, LanguageSwitched{}, PersonalitySet{},
		SessionStarted{}, SessionCleared{}, ProjectActivated{}, ProjectDeactivated{}} {
		r.Register(p, 1)
	}
}

// Fact validation errors.
var (
	ErrFactKey   = errors.New("invalid fact key")
	ErrFactValue = errors.New("invalid fact value")
)

const (
	maxFactKey   = 50
	maxFactValue = 200
)

// SenderProfile is the state folded from a sender stream.
type SenderProfile struct {
	Version     int64
	Welcomed    bool
	WelcomedAt  time.Time
	Name        string
	Language    string
	Personality string
	Facts       map[string]string
	// Sessions maps a project ("" for none) to its provider session.
	Sessions      map[string]string
	ActiveProject string
	WelcomedTurn  string
	// Deactivated are the projects left with /project off or
	// PROJECT_DEACTIVATE and not activated since: their heartbeats rest.
	Deactivated map[string]bool
}

// Apply folds one event into the profile. Unknown payloads are ignored so
// that later issues can add sender events without touching this fold.
func (p *SenderProfile) Apply(e domain.Payload, version int64, at time.Time) {
	p.Version = version
	switch ev := e.(type) {
	case Welcomed:
		p.Welcomed, p.WelcomedAt, p.Name, p.WelcomedTurn = true, at, ev.Name, ev.TurnID
		if p.Language == "" {
			p.Language = ev.Language
		}
	case FactRecorded:
		p.Facts = domain.SetIn(p.Facts, ev.Key, ev.Value)
	case FactRemoved:
		delete(p.Facts, ev.Key)
	case FactsPurged:
		p.Facts = nil
	case LanguageSwitched:
		p.Language = ev.To
	case PersonalitySet:
		p.Personality = ev.Personality
	case SessionStarted:
		p.Sessions = domain.SetIn(p.Sessions, ev.Project, ev.SessionID)
	case SessionCleared:
		delete(p.Sessions, ev.Project)
	case ProjectActivated:
		p.ActiveProject = ev.Project
		delete(p.Deactivated, ev.Project)
	case ProjectDeactivated:
		p.ActiveProject = ""
		if ev.Project != "" {
			p.Deactivated = domain.SetIn(p.Deactivated, ev.Project, true)
		}
	}
}

// StartSession decides the events for continuing in a provider session.
func (p SenderProfile) StartSession(project, sessionID, provider string) []domain.Payload {
	if sessionID == "" || p.Sessions[project] == sessionID {
		return nil
	}
	return []domain.Payload{SessionStarted{Project: project, SessionID: sessionID, Provider: provider}}
}

// ClearSession decides the events for forgetting a provider session.
func (p SenderProfile) ClearSession(project, reason string) []domain.Payload {
	if _, ok := p.Sessions[project]; !ok {
		return nil
	}
	return []domain.Payload{SessionCleared{Project: project, Reason: reason}}
}

// NormalizeFactKey lower-cases a key and joins words with underscores.
func NormalizeFactKey(key string) string {
	key = strings.ToLower(strings.TrimSpace(key))
	return strings.Join(strings.FieldsFunc(key, func(r rune) bool {
		return unicode.IsSpace(r) || r == '-'
	}), "_")
}

// ValidateFact applies the seed's plausibility rules (short keys, short
// values, no numeric-only keys or values, no prices, no table rows) and
// omega's own: keys are plain names and no marker's, and nothing
// secret-shaped is kept (see checkFactKey, checkFactValue).
func ValidateFact(key, value string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrFactKey)
	case len([]rune(key)) > maxFactKey:
		return fmt.Errorf("%w: longer than %d characters", ErrFactKey, maxFactKey)
	case isNumeric(key):
		return fmt.Errorf("%w: %q is only digits", ErrFactKey, key)
	}
	if err := checkFactKey(key); err != nil {
		return err
	}
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		return fmt.Errorf("%w: empty", ErrFactValue)
	case len([]rune(value)) > maxFactValue:
		return fmt.Errorf("%w: longer than %d characters", ErrFactValue, maxFactValue)
	case strings.HasPrefix(value, "$"):
		return fmt.Errorf("%w: looks like a price", ErrFactValue)
	case strings.Count(value, "|") >= 2:
		return fmt.Errorf("%w: looks like a table row", ErrFactValue)
	case isNumeric(strings.NewReplacer(".", "", ",", "").Replace(value)):
		return fmt.Errorf("%w: only a number", ErrFactValue)
	}
	return checkFactValue(value)
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// RecordFact decides the events for storing a fact: none when the fact is
// already known with the same value.
func (p SenderProfile) RecordFact(key, value, source string) ([]domain.Payload, error) {
	key = NormalizeFactKey(key)
	value = strings.TrimSpace(value)
	if err := ValidateFact(key, value); err != nil {
		return nil, err
	}
	if old, ok := p.Facts[key]; ok && old == value {
		return nil, nil
	}
	return []domain.Payload{FactRecorded{Key: key, Value: value, Source: source}}, nil
}

// RemoveFact decides the events for deleting a fact.
func (p SenderProfile) RemoveFact(key string) []domain.Payload {
	key = NormalizeFactKey(key)
	if _, ok := p.Facts[key]; !ok {
		return nil
	}
	return []domain.Payload{FactRemoved{Key: key}}
}

// PurgeFacts decides the events for deleting every fact.
func (p SenderProfile) PurgeFacts() []domain.Payload {
	return []domain.Payload{FactsPurged{Count: len(p.Facts)}}
}

// SwitchLanguage decides the events for changing the reply language.
func (p SenderProfile) SwitchLanguage(lang string) []domain.Payload {
	lang = strings.TrimSpace(lang)
	if lang == "" || strings.EqualFold(lang, p.Language) {
		return nil
	}
	return []domain.Payload{LanguageSwitched{From: p.Language, To: lang}}
}

// SetPersonality decides the events for changing the personality; "reset"
// or an empty value clears it.
func (p SenderProfile) SetPersonality(style string) []domain.Payload {
	style = strings.TrimSpace(style)
	if strings.EqualFold(style, "reset") {
		style = ""
	}
	if style == p.Personality {
		return nil
	}
	return []domain.Payload{PersonalitySet{Personality: style}}
}

// Welcome decides the first-contact event; none if already welcomed.
func (p SenderProfile) Welcome(name, lang, turnID string) []domain.Payload {
	if p.Welcomed {
		return nil
	}
	return []domain.Payload{Welcomed{Name: name, Language: lang, TurnID: turnID}}
}

// SortedFacts returns the facts ordered by key.
func (p SenderProfile) SortedFacts() [][2]string {
	keys := make([]string, 0, len(p.Facts))
	for k := range p.Facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, [2]string{k, p.Facts[k]})
	}
	return out
}
