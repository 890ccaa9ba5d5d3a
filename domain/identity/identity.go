package identity

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
)

// Identity across channels: the owner links a sender on one channel (the
// alias) to a sender on another (the canonical identity), and the alias's
// profile (facts, language, personality, projects) is then the canonical
// one's. Replies still go back on the channel a message came from.

// IdentityStream holds every link and unlink.
const IdentityStream = "identity-links"

// Identity events, on IdentityStream. Both sides are "channel:id".
type (
	IdentityLinked struct {
		Canonical string `json:"canonical"`
		Alias     string `json:"alias"`
		By        string `json:"by"`
	}
	IdentityUnlinked struct {
		Canonical string `json:"canonical"`
		Alias     string `json:"alias"`
		By        string `json:"by"`
	}
)

func (IdentityLinked) EventType() string   { return "IdentityLinked" }
func (IdentityUnlinked) EventType() string { return "IdentityUnlinked" }

// Identity decision errors.
var (
	ErrIdentityRef      = errors.New("want channel:id")
	ErrIdentitySame     = errors.New("an identity cannot be linked to itself")
	ErrIdentityLinked   = errors.New("already linked")
	ErrIdentityNotAlias = errors.New("not linked")
)

// ParseIdentity reads "channel:id" (ids may hold colons, channels not).
func ParseIdentity(s string) (sender.SenderRef, error) {
	ch, id, ok := strings.Cut(strings.TrimSpace(s), ":")
	ch, id = strings.ToLower(strings.TrimSpace(ch)), strings.TrimSpace(id)
	if !ok || ch == "" || id == "" || strings.ContainsAny(ch, " \t") {
		return sender.SenderRef{}, fmt.Errorf("%w: %q", ErrIdentityRef, s)
	}
	return sender.SenderRef{Channel: ch, ID: id}, nil
}

func identityString(r sender.SenderRef) string { return r.Channel + ":" + r.ID }

// Identities is IdentityStream folded: each alias and its canonical
// identity.
type Identities struct {
	Version int64
	Links   map[string]sender.SenderRef // alias "channel:id" -> canonical
}

// Apply folds one event.
func (s *Identities) Apply(e domain.Payload, version int64, _ time.Time) {
	s.Version = version
	switch ev := e.(type) {
	case IdentityLinked:
		if c, err := ParseIdentity(ev.Canonical); err == nil {
			s.Links = domain.SetIn(s.Links, ev.Alias, c)
		}
	case IdentityUnlinked:
		delete(s.Links, ev.Alias)
	}
}

// Resolve returns the identity whose profile a sender uses: its canonical
// identity when it is an alias, else itself.
func (s Identities) Resolve(r sender.SenderRef) sender.SenderRef {
	if c, ok := s.Links[identityString(r)]; ok {
		return c
	}
	return r
}

// Link decides linking alias to canonical. A canonical identity that is
// itself an alias is followed to its own canonical one, so links never
// chain; an alias that has aliases of its own cannot be linked.
func (s Identities) Link(canonical, alias sender.SenderRef, by string) ([]domain.Payload, error) {
	canonical = s.Resolve(canonical)
	a, c := identityString(alias), identityString(canonical)
	switch {
	case a == c:
		return nil, fmt.Errorf("%w: %s", ErrIdentitySame, a)
	case s.Links[a] == canonical:
		return nil, nil
	case s.Links[a] != sender.SenderRef{}:
		return nil, fmt.Errorf("%s is %w to %s", a, ErrIdentityLinked, identityString(s.Links[a]))
	case len(s.AliasesOf(alias)) > 0:
		return nil, fmt.Errorf("%s has identities %w to it; unlink them first", a, ErrIdentityLinked)
	}
	return []domain.Payload{IdentityLinked{Canonical: c, Alias: a, By: by}}, nil
}

// Unlink decides unlinking one identity; either side of a link may be
// named (naming the canonical side unlinks all its aliases).
func (s Identities) Unlink(r sender.SenderRef, by string) ([]domain.Payload, error) {
	name := identityString(r)
	if c, ok := s.Links[name]; ok {
		return []domain.Payload{IdentityUnlinked{Canonical: identityString(c), Alias: name, By: by}}, nil
	}
	var out []domain.Payload
	for _, alias := range s.AliasesOf(r) {
		out = append(out, IdentityUnlinked{Canonical: name, Alias: alias, By: by})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrIdentityNotAlias)
	}
	return out, nil
}

// AliasesOf lists the aliases linked to canonical, sorted.
func (s Identities) AliasesOf(canonical sender.SenderRef) []string {
	var out []string
	for alias, c := range s.Links {
		if c == canonical {
			out = append(out, alias)
		}
	}
	sort.Strings(out)
	return out
}

// List returns "alias → canonical" lines, sorted.
func (s Identities) List() []string {
	out := make([]string, 0, len(s.Links))
	for alias, c := range s.Links {
		out = append(out, alias+" → "+identityString(c))
	}
	sort.Strings(out)
	return out
}
