package access_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/sender"
)

func TestNewPairingCode(t *testing.T) {
	cases := []struct {
		name    string
		random  []byte
		want    string
		wantErr bool
	}{
		{"first letters", []byte{0, 1, 2, 3, 4, 5}, "ABCDEF", false},
		{"wraps the alphabet", []byte{31, 32, 62, 30, 61, 92}, "ABA999", false},
		{"biased bytes redrawn", append(bytes.Repeat([]byte{255}, 16), 7, 8, 9, 10, 11, 12), "HJKMNP", false},
		{"random runs out", []byte{1, 2}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The generator reads 16 bytes at a time: pad each case.
			src := append([]byte(nil), c.random...)
			for len(src)%16 != 0 && !c.wantErr {
				src = append(src, 255)
			}
			got, err := access.NewPairingCode(bytes.NewReader(src))
			if (err != nil) != c.wantErr || got != c.want {
				t.Fatalf("code %q err %v, want %q (error %v)", got, err, c.want, c.wantErr)
			}
		})
	}
	for i := 0; i < 50; i++ {
		code, err := access.NewPairingCode(cryptoReader{})
		if err != nil || len(code) != access.PairingCodeLength || strings.Trim(code, access.PairingCodeAlphabet) != "" {
			t.Fatalf("code %q err %v", code, err)
		}
	}
	for _, ambiguous := range "01ILO" {
		if strings.ContainsRune(access.PairingCodeAlphabet, ambiguous) {
			t.Fatalf("alphabet holds %q", ambiguous)
		}
	}
}

// cryptoReader counts up: deterministic, every byte value.
type cryptoReader struct{}

var counter byte

func (cryptoReader) Read(p []byte) (int, error) {
	for i := range p {
		counter += 37
		p[i] = counter
	}
	return len(p), nil
}

func TestNormalizePairingCode(t *testing.T) {
	for in, want := range map[string]string{" abc-def ": "ABCDEF", "AB CD EF": "ABCDEF", "x7k2mq": "X7K2MQ"} {
		if got := access.NormalizePairingCode(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// codes hands out the given codes in order.
func codes(cs ...string) func() (string, error) {
	return func() (string, error) {
		if len(cs) == 0 {
			return "", errors.New("no more codes")
		}
		c := cs[0]
		cs = cs[1:]
		return c, nil
	}
}

// fold applies events at the given times.
func fold(evs ...struct {
	p  domain.Payload
	at time.Time
}) access.SenderPairing {
	var s access.SenderPairing
	for i, e := range evs {
		s.Apply(e.p, int64(i+1), e.at)
	}
	return s
}

type ev = struct {
	p  domain.Payload
	at time.Time
}

func TestPairingOffer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	policy := access.PairingPolicy{TTL: time.Hour, MaxPerHour: 2}
	req := func(code, snd, turn string, at time.Time) ev {
		return ev{access.PairingRequested{Code: code, Channel: "telegram", SenderID: snd, ChatID: snd, TurnID: turn, ExpiresAt: at.Add(time.Hour)}, at}
	}
	rejected := func(code string) ev {
		return ev{access.PairingRejected{Code: code, Channel: "telegram", SenderID: "9"}, t0}
	}
	cases := []struct {
		name      string
		state     access.SenderPairing
		now       time.Time
		turn      string
		want      access.PairingOffer
		wantEvent bool
	}{
		{"first message gets a new code", fold(), t0, "t1",
			access.PairingOffer{Code: "AAAAAA", ExpiresAt: t0.Add(time.Hour), Fresh: true}, true},
		{"same sender within the TTL gets the same code", fold(req("BBBBBB", "9", "t1", t0)), t0.Add(30 * time.Minute), "t2",
			access.PairingOffer{Code: "BBBBBB", ExpiresAt: t0.Add(time.Hour)}, false},
		{"a resumed turn gets its own code again", fold(req("BBBBBB", "9", "t1", t0)), t0.Add(2 * time.Hour), "t1",
			access.PairingOffer{Code: "BBBBBB", ExpiresAt: t0.Add(time.Hour), Fresh: true}, false},
		{"expired code is replaced", fold(req("BBBBBB", "9", "t1", t0)), t0.Add(time.Hour), "t2",
			access.PairingOffer{Code: "AAAAAA", ExpiresAt: t0.Add(2 * time.Hour), Fresh: true}, true},
		{"another sender's code is not reused", fold(req("BBBBBB", "8", "t1", t0)), t0, "t2",
			access.PairingOffer{Code: "AAAAAA", ExpiresAt: t0.Add(time.Hour), Fresh: true}, true},
		{"a taken code is drawn again", fold(req("AAAAAA", "8", "t1", t0)), t0, "t2",
			access.PairingOffer{Code: "CCCCCC", ExpiresAt: t0.Add(time.Hour), Fresh: true}, true},
		{"codes older than an hour do not count", fold(req("BBBBBB", "9", "t1", t0), req("DDDDDD", "9", "t2", t0.Add(61*time.Minute))),
			t0.Add(121 * time.Minute), "t3", access.PairingOffer{Code: "AAAAAA", ExpiresAt: t0.Add(181 * time.Minute), Fresh: true}, true},
		{"rate limited after MaxPerHour codes in the last hour", fold(req("BBBBBB", "9", "t1", t0), rejected("BBBBBB"),
			req("DDDDDD", "9", "t2", t0.Add(10*time.Minute)), rejected("DDDDDD")),
			t0.Add(20 * time.Minute), "t3", access.PairingOffer{Limited: true}, false},
		{"rejected code is not offered again", fold(req("BBBBBB", "9", "t1", t0),
			ev{access.PairingRejected{Code: "BBBBBB", Channel: "telegram", SenderID: "9"}, t0}), t0.Add(time.Minute), "t2",
			access.PairingOffer{Code: "AAAAAA", ExpiresAt: t0.Add(61 * time.Minute), Fresh: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := access.PairingRequested{Channel: "telegram", SenderID: "9", ChatID: "9", TurnID: c.turn}
			got, evs, err := c.state.Offer(c.now, r, policy, codes("AAAAAA", "CCCCCC"))
			if err != nil || got != c.want || (len(evs) == 1) != c.wantEvent {
				t.Fatalf("offer %+v events %v err %v, want %+v (event %v)", got, evs, err, c.want, c.wantEvent)
			}
			if c.wantEvent {
				if p := evs[0].(access.PairingRequested); p.Code != got.Code || !p.ExpiresAt.Equal(got.ExpiresAt) || p.TurnID != c.turn {
					t.Fatalf("event %+v", p)
				}
			}
		})
	}
}

func TestPairingDecisions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	requested := ev{access.PairingRequested{Code: "ABCDEF", Channel: "whatsapp", SenderID: "49", TurnID: "t1", ExpiresAt: t0.Add(time.Hour)}, t0}
	approved := ev{access.PairingApproved{Code: "ABCDEF", Channel: "whatsapp", SenderID: "49", By: "owner"}, t0}
	cases := []struct {
		name    string
		state   access.SenderPairing
		now     time.Time
		code    string
		approve bool
		wantErr error
	}{
		{"approve a pending code", fold(requested), t0.Add(time.Minute), "abc-def", true, nil},
		{"reject a pending code", fold(requested), t0.Add(time.Minute), "ABCDEF", false, nil},
		{"unknown code", fold(requested), t0, "ZZZZZZ", true, access.ErrPairingUnknown},
		{"expired code cannot be approved", fold(requested), t0.Add(time.Hour), "ABCDEF", true, access.ErrPairingExpired},
		{"expired code cannot be rejected", fold(requested), t0.Add(2 * time.Hour), "ABCDEF", false, access.ErrPairingExpired},
		{"decided code", fold(requested, approved), t0, "ABCDEF", false, access.ErrPairingDecided},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			decide := c.state.Reject
			if c.approve {
				decide = c.state.Approve
			}
			_, evs, err := decide(c.now, c.code, "owner")
			if !errors.Is(err, c.wantErr) || (err == nil) != (len(evs) == 1) {
				t.Fatalf("events %v err %v, want %v", evs, err, c.wantErr)
			}
		})
	}

	s := fold(requested, approved)
	if !s.IsApproved("whatsapp", "49") || len(s.ToTell()) != 1 || s.ApprovedSenders()[0] != "whatsapp:49" {
		t.Fatalf("approved state %+v", s)
	}
	s.Apply(access.PairingSenderNotified{Code: "ABCDEF"}, 3, t0)
	if len(s.ToTell()) != 0 {
		t.Fatal("a told sender is told again")
	}
	revoke, err := s.Revoke("whatsapp", "49", "owner")
	if err != nil || len(revoke) != 1 {
		t.Fatalf("revoke %v %v", revoke, err)
	}
	s.Apply(revoke[0], 4, t0)
	if s.IsApproved("whatsapp", "49") {
		t.Fatal("revoked sender still approved")
	}
	if _, err := s.Revoke("whatsapp", "49", "owner"); !errors.Is(err, access.ErrNotPaired) {
		t.Fatalf("second revoke: %v", err)
	}
}

func TestIdentityLinks(t *testing.T) {
	tg, wa, wa2 := sender.SenderRef{Channel: "telegram", ID: "1"}, sender.SenderRef{Channel: "whatsapp", ID: "2"}, sender.SenderRef{Channel: "whatsapp", ID: "3"}
	var s identity.Identities
	apply := func(ps []domain.Payload, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			s.Apply(p, s.Version+1, time.Time{})
		}
	}
	apply(s.Link(tg, wa, "owner"))
	if s.Resolve(wa) != tg || s.Resolve(tg) != tg || s.Resolve(wa2) != wa2 {
		t.Fatalf("resolve after link: %+v", s.Links)
	}
	cases := []struct {
		name             string
		canonical, alias sender.SenderRef
		want             error
	}{
		{"itself", tg, tg, identity.ErrIdentitySame},
		{"alias linked elsewhere", wa2, wa, identity.ErrIdentityLinked},
		{"canonical with aliases", wa2, tg, identity.ErrIdentityLinked},
		{"through an alias to itself", wa, tg, identity.ErrIdentitySame},
	}
	for _, c := range cases {
		if _, err := s.Link(c.canonical, c.alias, "owner"); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if ps, err := s.Link(tg, wa, "owner"); err != nil || len(ps) != 0 {
		t.Fatalf("relinking the same: %v %v", ps, err)
	}
	apply(s.Link(wa, wa2, "owner")) // wa resolves to tg: no chain
	if s.Resolve(wa2) != tg || len(s.AliasesOf(tg)) != 2 || len(s.List()) != 2 {
		t.Fatalf("links %+v", s.Links)
	}
	apply(s.Unlink(tg, "owner")) // the canonical side unlinks all
	if s.Resolve(wa) != wa || s.Resolve(wa2) != wa2 {
		t.Fatalf("after unlink: %+v", s.Links)
	}
	if _, err := s.Unlink(wa, "owner"); !errors.Is(err, identity.ErrIdentityNotAlias) {
		t.Fatalf("unlink again: %v", err)
	}
	for _, bad := range []string{"telegram", ":1", "telegram:", "tele gram:1"} {
		if _, err := identity.ParseIdentity(bad); !errors.Is(err, identity.ErrIdentityRef) {
			t.Errorf("%q parsed", bad)
		}
	}
	if r, err := identity.ParseIdentity(" WhatsApp:+49 151 "); err != nil || r != (sender.SenderRef{Channel: "whatsapp", ID: "+49 151"}) {
		t.Fatalf("parse: %+v %v", r, err)
	}
}
