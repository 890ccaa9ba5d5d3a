package identity_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
)

var (
	tg  = sender.SenderRef{Channel: "telegram", ID: "1"}
	wa  = sender.SenderRef{Channel: "whatsapp", ID: "2"}
	wa2 = sender.SenderRef{Channel: "whatsapp", ID: "3"}
	em  = sender.SenderRef{Channel: "email", ID: "a@b.c"}
)

func linked(canonical, alias string) identity.IdentityLinked {
	return identity.IdentityLinked{Canonical: canonical, Alias: alias, By: "owner"}
}

func unlinked(canonical, alias string) identity.IdentityUnlinked {
	return identity.IdentityUnlinked{Canonical: canonical, Alias: alias, By: "owner"}
}

// fold applies a history, numbering its events from 1.
func fold(history ...domain.Payload) identity.Identities {
	var s identity.Identities
	for i, p := range history {
		s.Apply(p, int64(i+1), time.Time{})
	}
	return s
}

// TestParseIdentityKeepsColonsInTheID covers what the access tests leave
// out: an id may itself hold colons, and a tab in the channel is refused
// like a space.
func TestParseIdentityKeepsColonsInTheID(t *testing.T) {
	cases := []struct {
		in      string
		want    sender.SenderRef
		wantErr error
	}{
		{"matrix:@bob:example.org", sender.SenderRef{Channel: "matrix", ID: "@bob:example.org"}, nil},
		{"EMAIL : a@b.c ", sender.SenderRef{Channel: "email", ID: "a@b.c"}, nil},
		{"tele\tgram:1", sender.SenderRef{}, identity.ErrIdentityRef},
		{"", sender.SenderRef{}, identity.ErrIdentityRef},
		{" : ", sender.SenderRef{}, identity.ErrIdentityRef},
	}
	for _, c := range cases {
		got, err := identity.ParseIdentity(c.in)
		if got != c.want || !errors.Is(err, c.wantErr) {
			t.Errorf("ParseIdentity(%q) = %+v, %v; want %+v, %v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestLinkDecidesTheEvent(t *testing.T) {
	cases := []struct {
		name             string
		history          []domain.Payload
		canonical, alias sender.SenderRef
		want             []domain.Payload
	}{
		{"first link", nil, tg, wa,
			[]domain.Payload{linked("telegram:1", "whatsapp:2")}},
		{"a canonical that is an alias names its own canonical", []domain.Payload{linked("telegram:1", "whatsapp:2")}, wa, em,
			[]domain.Payload{linked("telegram:1", "email:a@b.c")}},
		{"an unlinked alias may be linked elsewhere", []domain.Payload{linked("telegram:1", "whatsapp:2"), unlinked("telegram:1", "whatsapp:2")}, wa2, wa,
			[]domain.Payload{linked("whatsapp:3", "whatsapp:2")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fold(c.history...).Link(c.canonical, c.alias, "owner")
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Link = %#v, %v; want %#v", got, err, c.want)
			}
		})
	}
}

func TestUnlinkDecidesTheEvents(t *testing.T) {
	two := []domain.Payload{linked("telegram:1", "whatsapp:3"), linked("telegram:1", "whatsapp:2"), linked("email:a@b.c", "whatsapp:9")}
	cases := []struct {
		name    string
		history []domain.Payload
		named   sender.SenderRef
		want    []domain.Payload
		wantErr error
	}{
		{"the alias side names its canonical", two, wa,
			[]domain.Payload{unlinked("telegram:1", "whatsapp:2")}, nil},
		{"the canonical side unlinks its aliases only, sorted", two, tg,
			[]domain.Payload{unlinked("telegram:1", "whatsapp:2"), unlinked("telegram:1", "whatsapp:3")}, nil},
		{"an identity never linked", nil, em, nil, identity.ErrIdentityNotAlias},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := fold(c.history...).Unlink(c.named, "owner")
			if !errors.Is(err, c.wantErr) || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Unlink = %#v, %v; want %#v, %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestIdentitiesFold(t *testing.T) {
	cases := []struct {
		name    string
		history []domain.Payload
		want    map[string]sender.SenderRef
	}{
		{"no events", nil, nil},
		{"a link", []domain.Payload{linked("telegram:1", "whatsapp:2")},
			map[string]sender.SenderRef{"whatsapp:2": tg}},
		{"a link whose canonical does not parse is ignored", []domain.Payload{linked("telegram", "whatsapp:2")}, nil},
		{"an unlink of an unknown alias changes nothing", []domain.Payload{linked("telegram:1", "whatsapp:2"), unlinked("telegram:1", "whatsapp:3")},
			map[string]sender.SenderRef{"whatsapp:2": tg}},
		{"link, unlink, link elsewhere", []domain.Payload{linked("telegram:1", "whatsapp:2"), unlinked("telegram:1", "whatsapp:2"), linked("email:a@b.c", "whatsapp:2")},
			map[string]sender.SenderRef{"whatsapp:2": em}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fold(c.history...)
			if len(s.Links) != len(c.want) || (len(c.want) > 0 && !reflect.DeepEqual(s.Links, c.want)) {
				t.Errorf("Links = %v, want %v", s.Links, c.want)
			}
			if s.Version != int64(len(c.history)) {
				t.Errorf("Version = %d, want %d", s.Version, len(c.history))
			}
		})
	}
}

func TestAliasesOfAndList(t *testing.T) {
	s := fold(linked("telegram:1", "whatsapp:3"), linked("telegram:1", "email:a@b.c"), linked("whatsapp:2", "whatsapp:9"))
	if got, want := s.AliasesOf(tg), []string{"email:a@b.c", "whatsapp:3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("AliasesOf(telegram:1) = %v, want %v", got, want)
	}
	if got := s.AliasesOf(em); got != nil {
		t.Errorf("AliasesOf an alias = %v, want none", got)
	}
	want := []string{"email:a@b.c → telegram:1", "whatsapp:3 → telegram:1", "whatsapp:9 → whatsapp:2"}
	if got := s.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("List() = %q, want %q", got, want)
	}
	if got := fold().List(); got == nil || len(got) != 0 {
		t.Errorf("List() of no links = %#v, want an empty list", got)
	}
}
