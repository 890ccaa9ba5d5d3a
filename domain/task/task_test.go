package task

import (
	"errors"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/selfheal"
)

func TestTaskDecisions(t *testing.T) {
	due := time.Date(2026, 3, 1, 17, 0, 0, 0, time.UTC)
	sched := TaskScheduled{ID: "t1", Description: "Call Juan", Due: due, Kind: TaskKindReminder}
	var pending Task
	ps, err := pending.Schedule(sched)
	if err != nil || len(ps) != 1 {
		t.Fatalf("schedule: %v %v", ps, err)
	}
	pending.Apply(ps[0], 1, time.Time{})
	if got := ps[0].(TaskScheduled).Repeat; got != "once" {
		t.Fatalf("default repeat = %q", got)
	}
	if _, err := pending.Schedule(sched); !errors.Is(err, ErrTaskExists) {
		t.Fatalf("second schedule: %v", err)
	}
	for _, bad := range []TaskScheduled{
		{ID: "x", Due: due, Kind: TaskKindReminder},
		{ID: "x", Description: "d", Kind: TaskKindReminder},
		{ID: "x", Description: "d", Due: due, Kind: "other"},
	} {
		if _, err := (Task{}).Schedule(bad); !errors.Is(err, ErrTaskInvalid) {
			t.Errorf("schedule %+v: %v", bad, err)
		}
	}

	up, err := pending.Update(TaskUpdated{Description: "Call Juan", Repeat: "daily"})
	if err != nil || len(up) != 1 || up[0].(TaskUpdated).Description != "" || up[0].(TaskUpdated).Repeat != "daily" {
		t.Fatalf("update: %+v %v", up, err)
	}
	if up, _ := pending.Update(TaskUpdated{Description: "Call Juan", Due: due}); up != nil {
		t.Fatalf("no-op update decided %+v", up)
	}
	cancelled := pending
	cs, err := cancelled.Cancel("turn", "marker")
	if err != nil || len(cs) != 1 {
		t.Fatal(cs, err)
	}
	cancelled.Apply(cs[0], 2, time.Time{})
	if _, err := cancelled.Cancel("turn", "marker"); !errors.Is(err, ErrTaskNotPending) {
		t.Fatalf("second cancel: %v", err)
	}
	if _, err := cancelled.Update(TaskUpdated{Repeat: "daily"}); !errors.Is(err, ErrTaskNotPending) {
		t.Fatalf("update cancelled: %v", err)
	}
}

func TestSimilarTasks(t *testing.T) {
	at := time.Date(2026, 3, 1, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		a, b string
		gap  time.Duration
		want bool
	}{
		{"Call Juan", "Call Juan", 0, true},
		{"Call Juan", "call juan about the car", 10 * time.Minute, true},
		{"Call Juan", "Call Juan", 31 * time.Minute, false},
		{"Call Juan", "Buy milk", 0, false},
		{"Dentist appointment", "appointment with dentist", 29 * time.Minute, true},
		{"Pay rent", "Pay taxes", 0, false},
	}
	for _, tt := range tests {
		if got := SimilarTasks(tt.a, at, tt.b, at.Add(tt.gap)); got != tt.want {
			t.Errorf("SimilarTasks(%q, %q, %s) = %v, want %v", tt.a, tt.b, tt.gap, got, tt.want)
		}
	}
}

func TestHeartbeatDecisions(t *testing.T) {
	var h heartbeat.Heartbeat
	apply := func(ps []domain.Payload) {
		for _, p := range ps {
			h.Apply(p, h.Version+1, time.Time{})
		}
	}
	apply(h.Add("Check email"))
	apply(h.Add("check EMAIL"))
	apply(h.Add("Water the plants"))
	if len(h.Items) != 2 {
		t.Fatalf("items = %v", h.Items)
	}
	apply(h.Remove("plants"))
	if len(h.Items) != 1 || h.Items[0] != "Check email" {
		t.Fatalf("after remove: %v", h.Items)
	}
	if h.Remove("nothing") != nil {
		t.Fatal("removing an absent item decided events")
	}
	for _, m := range []int{0, 1441, -5} {
		if _, err := h.SetInterval(m, heartbeat.IntervalByCLI); !errors.Is(err, heartbeat.ErrHeartbeatInterval) {
			t.Errorf("interval %d: %v", m, err)
		}
	}
	ps, err := h.SetInterval(30, heartbeat.IntervalByCLI)
	if err != nil || len(ps) != 1 {
		t.Fatal(ps, err)
	}
	apply(ps)
	if ps, _ := h.SetInterval(30, heartbeat.IntervalByCLI); ps != nil {
		t.Fatal("same interval decided events")
	}
	apply(h.Suppress("Weather"))
	if h.Suppress("weather") != nil || len(h.Suppressed) != 1 {
		t.Fatalf("suppressed = %v", h.Suppressed)
	}
	apply(h.Unsuppress("WEATHER"))
	if len(h.Suppressed) != 0 {
		t.Fatalf("suppressed = %v", h.Suppressed)
	}
}

func TestSelfHealStopsAtMaxIterations(t *testing.T) {
	var s selfheal.SelfHeal
	var types []string
	for range selfheal.MaxSelfHealIterations + 3 {
		for _, p := range s.Heal("disk full", "df -h") {
			types = append(types, p.EventType())
			s.Apply(p, s.Version+1, time.Time{})
		}
	}
	if s.Iteration != selfheal.MaxSelfHealIterations || !s.Escalated {
		t.Fatalf("state = %+v", s)
	}
	if types[0] != "SelfHealStarted" || types[len(types)-1] != "SelfHealEscalated" || len(types) != selfheal.MaxSelfHealIterations+1 {
		t.Fatalf("events = %v", types)
	}
	res := s.Resolve()
	if len(res) != 1 {
		t.Fatal(res)
	}
	s.Apply(res[0], s.Version+1, time.Time{})
	if s.Active || s.Resolve() != nil {
		t.Fatalf("after resolve: %+v", s)
	}
}

func TestLearningLimitationsSkillsDeduplicate(t *testing.T) {
	var l learning.Learning
	for _, p := range l.Learn("email", "Keep it short", "work") {
		l.Apply(p, 1, time.Time{})
	}
	if l.Learn("EMAIL", "keep it short", "work") != nil || l.Learn("email", "Keep it short", "home") == nil || l.Learn("x", " ", "") != nil {
		t.Fatal("lesson dedupe is wrong")
	}
	var lim learning.Limitations
	for _, p := range lim.Report("No browser", "cannot browse", "") {
		lim.Apply(p, 1, time.Time{})
	}
	if lim.Report("no BROWSER", "again", "") != nil || lim.Report("", "x", "") != nil {
		t.Fatal("limitation dedupe is wrong")
	}
	var sk catalog.Skill
	for _, p := range sk.Improve("git", "rebase before push") {
		sk.Apply(p, 1, time.Time{})
	}
	if sk.Improve("git", "Rebase before push") != nil || len(sk.Lessons) != 1 {
		t.Fatal("skill dedupe is wrong")
	}
}
