package selfheal_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/selfheal"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// fold applies a history, numbering its events from 1 and recording the
// n-th one n minutes after t0.
func fold(history ...domain.Payload) selfheal.SelfHeal {
	var s selfheal.SelfHeal
	for i, p := range history {
		s.Apply(p, int64(i+1), t0.Add(time.Duration(i)*time.Minute))
	}
	return s
}

func started(d string) selfheal.SelfHealStarted {
	return selfheal.SelfHealStarted{Description: d, Verification: "df -h"}
}

func iterated(n int, d string) selfheal.SelfHealIterated {
	return selfheal.SelfHealIterated{Iteration: n, Description: d}
}

// atLimit is an effort that has used all its iterations.
func atLimit() []domain.Payload {
	h := []domain.Payload{started("try 1")}
	for n := 2; n <= selfheal.MaxSelfHealIterations; n++ {
		h = append(h, iterated(n, "try"))
	}
	return h
}

func TestHeal(t *testing.T) {
	resolved := []domain.Payload{started("disk full"), selfheal.SelfHealResolved{Iterations: 1}}
	cases := []struct {
		name                      string
		history                   []domain.Payload
		description, verification string
		want                      []domain.Payload
	}{
		{"no effort: start, trimmed", nil, "  disk full\n", "df -h",
			[]domain.Payload{selfheal.SelfHealStarted{Description: "disk full", Verification: "df -h"}}},
		{"a blank description decides nothing", nil, " \t", "df -h", nil},
		{"an active effort iterates", []domain.Payload{started("disk full"), iterated(2, "rotate logs")}, "purge cache", "",
			[]domain.Payload{selfheal.SelfHealIterated{Iteration: 3, Description: "purge cache"}}},
		{"one below the limit still iterates", atLimit()[:selfheal.MaxSelfHealIterations-1], "again", "",
			[]domain.Payload{selfheal.SelfHealIterated{Iteration: selfheal.MaxSelfHealIterations, Description: "again"}}},
		{"at the limit: escalate", atLimit(), "again", "",
			[]domain.Payload{selfheal.SelfHealEscalated{Iterations: selfheal.MaxSelfHealIterations, Description: "again"}}},
		{"escalated: nothing more", append(atLimit(), selfheal.SelfHealEscalated{Iterations: selfheal.MaxSelfHealIterations}), "again", "", nil},
		{"resolved: a new effort starts", resolved, "disk full again", "",
			[]domain.Payload{selfheal.SelfHealStarted{Description: "disk full again"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fold(c.history...).Heal(c.description, c.verification); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Heal = %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		name    string
		history []domain.Payload
		want    []domain.Payload
	}{
		{"no effort", nil, nil},
		{"already resolved", []domain.Payload{started("x"), selfheal.SelfHealResolved{Iterations: 1}}, nil},
		{"an active effort", []domain.Payload{started("x"), iterated(2, "y")},
			[]domain.Payload{selfheal.SelfHealResolved{Iterations: 2}}},
		{"an escalated effort", append(atLimit(), selfheal.SelfHealEscalated{Iterations: selfheal.MaxSelfHealIterations}),
			[]domain.Payload{selfheal.SelfHealResolved{Iterations: selfheal.MaxSelfHealIterations}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fold(c.history...).Resolve(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Resolve = %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestSelfHealFold(t *testing.T) {
	at := func(n int) time.Time { return t0.Add(time.Duration(n-1) * time.Minute) }
	followUp := func(effort int64, it int) selfheal.SelfHealFollowUpStarted {
		return selfheal.SelfHealFollowUpStarted{Effort: effort, Iteration: it}
	}
	cases := []struct {
		name    string
		history []domain.Payload
		want    selfheal.SelfHeal
	}{
		{"started", []domain.Payload{started("disk full")},
			selfheal.SelfHeal{Version: 1, Active: true, Iteration: 1, Description: "disk full", Verification: "df -h",
				Effort: 1, Changed: at(1), Attempts: []string{"disk full"}}},
		{"an iteration without a verification keeps the last one", []domain.Payload{started("a"), iterated(2, "b")},
			selfheal.SelfHeal{Version: 2, Active: true, Iteration: 2, Description: "b", Verification: "df -h",
				Effort: 1, Changed: at(2), Attempts: []string{"a", "b"}}},
		{"an iteration with a verification replaces it", []domain.Payload{started("a"), selfheal.SelfHealIterated{Iteration: 2, Description: "b", Verification: "du -s"}},
			selfheal.SelfHeal{Version: 2, Active: true, Iteration: 2, Description: "b", Verification: "du -s",
				Effort: 1, Changed: at(2), Attempts: []string{"a", "b"}}},
		{"escalated and notified", []domain.Payload{started("a"), selfheal.SelfHealEscalated{Iterations: 1}, selfheal.SelfHealOwnerNotified{Text: "help"}},
			selfheal.SelfHeal{Version: 3, Active: true, Escalated: true, Notified: true, Iteration: 1, Description: "a", Verification: "df -h",
				Effort: 1, Changed: at(1), Attempts: []string{"a"}}},
		{"resolved keeps only the version", []domain.Payload{started("a"), followUp(1, 1), selfheal.SelfHealResolved{Iterations: 1}},
			selfheal.SelfHeal{Version: 3}},
		{"a new effort is keyed by its own version", []domain.Payload{started("a"), selfheal.SelfHealResolved{}, started("c")},
			selfheal.SelfHeal{Version: 3, Active: true, Iteration: 1, Description: "c", Verification: "df -h",
				Effort: 3, Changed: at(3), Attempts: []string{"c"}}},
		{"a follow-up replied and done", []domain.Payload{started("a"), followUp(1, 1),
			selfheal.SelfHealFollowUpReplied{Effort: 1, Iteration: 1, Raw: "SELF_HEAL_RESOLVED"}, selfheal.SelfHealFollowUpDone{Effort: 1, Iteration: 1}},
			selfheal.SelfHeal{Version: 4, Active: true, Iteration: 1, Description: "a", Verification: "df -h", Effort: 1, Changed: at(1),
				Attempts: []string{"a"}, FollowUp: &selfheal.SelfHealFollowUp{Iteration: 1, Replied: true, Raw: "SELF_HEAL_RESOLVED", Done: true}}},
		{"a follow-up of an earlier effort is not this one's", []domain.Payload{started("a"), selfheal.SelfHealResolved{}, started("c"), followUp(1, 1)},
			selfheal.SelfHeal{Version: 4, Active: true, Iteration: 1, Description: "c", Verification: "df -h",
				Effort: 3, Changed: at(3), Attempts: []string{"c"}}},
		{"late follow-up events of an earlier effort or iteration change nothing", []domain.Payload{started("a"), selfheal.SelfHealResolved{}, started("c"),
			followUp(1, 1), followUp(3, 1), selfheal.SelfHealFollowUpReplied{Effort: 1, Iteration: 1, Raw: "old"},
			selfheal.SelfHealFollowUpReplied{Effort: 3, Iteration: 2, Raw: "ahead"}, selfheal.SelfHealFollowUpDone{Effort: 1, Iteration: 1}},
			selfheal.SelfHeal{Version: 8, Active: true, Iteration: 1, Description: "c", Verification: "df -h", Effort: 3, Changed: at(3),
				Attempts: []string{"c"}, FollowUp: &selfheal.SelfHealFollowUp{Iteration: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fold(c.history...); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("fold = %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestFollowUpDue(t *testing.T) {
	const delay = 5 * time.Minute
	cases := []struct {
		name    string
		history []domain.Payload
		due     time.Time
		ok      bool
	}{
		{"no effort", nil, time.Time{}, false},
		{"started: a delay after the start", []domain.Payload{started("a")}, t0.Add(delay), true},
		{"its follow-up started", []domain.Payload{started("a"), selfheal.SelfHealFollowUpStarted{Effort: 1, Iteration: 1}}, time.Time{}, false},
		{"iterated since the last follow-up: a delay after the iteration",
			[]domain.Payload{started("a"), selfheal.SelfHealFollowUpStarted{Effort: 1, Iteration: 1}, iterated(2, "b")},
			t0.Add(2*time.Minute + delay), true},
		{"escalated", []domain.Payload{started("a"), selfheal.SelfHealEscalated{Iterations: 1}}, time.Time{}, false},
		{"resolved", []domain.Payload{started("a"), selfheal.SelfHealResolved{Iterations: 1}}, time.Time{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, ok := fold(c.history...).FollowUpDue(delay)
			if ok != c.ok || !due.Equal(c.due) {
				t.Fatalf("FollowUpDue = %v, %v; want %v, %v", due, ok, c.due, c.ok)
			}
		})
	}
}

func TestEventTypes(t *testing.T) {
	r := domain.NewRegistry()
	selfheal.RegisterEvents(r)
	names := []string{"SelfHealStarted", "SelfHealIterated", "SelfHealEscalated", "SelfHealResolved",
		"SelfHealFollowUpStarted", "SelfHealFollowUpReplied", "SelfHealFollowUpDone", "SelfHealOwnerNotified"}
	for _, name := range names {
		if p := r.Sample(name); p == nil || p.EventType() != name {
			t.Errorf("%s is not registered under its name: %#v", name, p)
		}
	}
	if n := len(r.Types()); n != len(names) {
		t.Errorf("%d types registered, want %d", n, len(names))
	}
	if selfheal.SelfHealStream != "selfheal" {
		t.Errorf("SelfHealStream = %q", selfheal.SelfHealStream)
	}
}
