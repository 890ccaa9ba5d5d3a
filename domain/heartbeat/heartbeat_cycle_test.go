package heartbeat

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("zone %s: %v", name, err)
	}
	return loc
}

func TestHeartbeatSlot(t *testing.T) {
	madrid := mustLoc(t, "Europe/Madrid")
	at := func(loc *time.Location, s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name       string
		now        time.Time
		interval   time.Duration
		slot, next string
		loc        *time.Location
	}{
		{"on the hour", at(time.UTC, "2026-03-01 10:00:00"), 30 * time.Minute, "10:00", "10:30", time.UTC},
		{"mid slot", at(time.UTC, "2026-03-01 10:17:42"), 30 * time.Minute, "10:00", "10:30", time.UTC},
		{"hourly", at(time.UTC, "2026-03-01 10:59:59"), time.Hour, "10:00", "11:00", time.UTC},
		{"odd interval restarts at midnight", at(time.UTC, "2026-03-01 23:57:00"), 7 * time.Minute, "23:55", "00:00", time.UTC},
		{"local boundaries", at(madrid, "2026-07-01 09:44:00"), 15 * time.Minute, "09:30", "09:45", madrid},
		// 29 March 2026: Madrid jumps from 02:00 to 03:00. Boundaries count
		// elapsed time from midnight, so 03:30 local is 2.5 h after it.
		{"after the spring jump", at(madrid, "2026-03-29 03:40:00"), time.Hour, "03:00", "04:00", madrid},
		{"daily", at(madrid, "2026-03-01 17:00:00"), 24 * time.Hour, "00:00", "00:00", madrid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			slot := HeartbeatSlot(c.now, c.interval, c.loc)
			next := NextHeartbeatSlot(c.now, c.interval, c.loc)
			if got := slot.In(c.loc).Format("15:04"); got != c.slot {
				t.Errorf("slot %s, want %s", got, c.slot)
			}
			if got := next.In(c.loc).Format("15:04"); got != c.next {
				t.Errorf("next %s, want %s", got, c.next)
			}
			if !next.After(c.now) || slot.After(c.now) {
				t.Errorf("slot %s next %s around %s", slot, next, c.now)
			}
		})
	}
}

func TestActiveHours(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	day, err := ParseActiveHours("08:00-22:00")
	if err != nil {
		t.Fatal(err)
	}
	night, err := ParseActiveHours("22:00-06:00")
	if err != nil {
		t.Fatal(err)
	}
	always, _ := ParseActiveHours("")
	utc := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	cases := []struct {
		name   string
		a      ActiveHours
		t      time.Time
		loc    *time.Location
		in     bool
		start  string // next start, local
		inDate string
	}{
		{"inside", day, utc("2026-05-01T12:00:00Z"), time.UTC, true, "08:00", "2026-05-02"},
		{"before start", day, utc("2026-05-01T07:59:00Z"), time.UTC, false, "08:00", "2026-05-01"},
		{"end is exclusive", day, utc("2026-05-01T22:00:00Z"), time.UTC, false, "08:00", "2026-05-02"},
		{"across midnight, late", night, utc("2026-05-01T23:30:00Z"), time.UTC, true, "22:00", "2026-05-02"},
		{"across midnight, early", night, utc("2026-05-01T05:59:00Z"), time.UTC, true, "22:00", "2026-05-01"},
		{"across midnight, day", night, utc("2026-05-01T12:00:00Z"), time.UTC, false, "22:00", "2026-05-01"},
		{"always", always, utc("2026-05-01T03:00:00Z"), time.UTC, true, "00:00", "2026-05-02"},
		// 8 March 2026 02:00 EST → 03:00 EDT; local 07:30 is 11:30 UTC.
		{"DST day, local time", day, utc("2026-03-08T11:30:00Z"), ny, false, "08:00", "2026-03-08"},
		{"DST day, local inside", day, utc("2026-03-08T12:30:00Z"), ny, true, "08:00", "2026-03-09"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Contains(c.t, c.loc); got != c.in {
				t.Errorf("Contains = %v, want %v", got, c.in)
			}
			if !c.a.Set {
				return
			}
			s := c.a.NextStart(c.t, c.loc).In(c.loc)
			if s.Format("15:04") != c.start || s.Format("2006-01-02") != c.inDate {
				t.Errorf("NextStart %s, want %s %s", s, c.inDate, c.start)
			}
		})
	}
	for _, bad := range []string{"8-22", "08:00", "25:00-26:00", "08:00-08:00", "08:60-09:00"} {
		if _, err := ParseActiveHours(bad); err == nil {
			t.Errorf("ParseActiveHours(%q) accepted", bad)
		}
	}
}

func TestHeartbeatChecklist(t *testing.T) {
	items := []string{
		"Drink water",
		"## TRADING — Autonomous engine",
		"Check BTC",
		"Review stops",
		"## omega_trader",
		"Trader item",
		"## Health",
		"# a comment",
		"## Empty",
	}
	cases := []struct {
		name                 string
		suppressed, excluded []string
		want                 []string
		count                int
	}{
		{"nothing dropped", nil, nil, []string{"Drink water", "## TRADING — Autonomous engine", "Check BTC", "Review stops",
			"## omega_trader", "Trader item", "## Health", "# a comment"}, 4},
		{"suppressed by name before the dash, any case", []string{"trading"}, nil,
			[]string{"Drink water", "## omega_trader", "Trader item", "## Health", "# a comment"}, 2},
		{"project sections normalized", nil, []string{"Omega-Trader"},
			[]string{"Drink water", "## TRADING — Autonomous engine", "Check BTC", "Review stops", "## Health", "# a comment"}, 3},
		{"all suppressed", []string{"trading", "health", "omega trader"}, nil, []string{"Drink water"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, n := HeartbeatChecklist(items, c.suppressed, c.excluded)
			if !reflect.DeepEqual(got, c.want) || n != c.count {
				t.Errorf("got %q (%d), want %q (%d)", got, n, c.want, c.count)
			}
		})
	}
	if got, n := HeartbeatChecklist([]string{"## A", "x", "## B", "y"}, []string{"a", "b"}, nil); got != nil || n != 0 {
		t.Errorf("everything suppressed: %q %d", got, n)
	}
	if got, n := HeartbeatChecklist([]string{"# just a comment"}, nil, nil); got != nil || n != 0 {
		t.Errorf("comments only: %q %d", got, n)
	}
}

func TestParseHeartbeatGroups(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	cases := []struct {
		name  string
		reply string
		want  []HeartbeatGroup
		err   bool
	}{
		{"direct", "DIRECT", []HeartbeatGroup{{"all", items}}, false},
		{"direct in markdown", "**DIRECT**.", []HeartbeatGroup{{"all", items}}, false},
		{"groups", "trading: 1, 2\nhealth: 3,4,5", []HeartbeatGroup{{"trading", []string{"a", "b"}}, {"health", []string{"c", "d", "e"}}}, false},
		{"bullets and leftovers", "- **trading**: 1 2\nsome chatter\n- home: #4", []HeartbeatGroup{{"trading", []string{"a", "b"}}, {"home", []string{"d"}}, {"other", []string{"c", "e"}}}, false},
		{"an item twice counts once", "x: 1, 1\ny: 1, 2", []HeartbeatGroup{{"x", []string{"a"}}, {"y", []string{"b"}}, {"other", []string{"c", "d", "e"}}}, false},
		{"out of range", "x: 1, 9", nil, true},
		{"nothing usable", "I think these are fine", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseHeartbeatGroups(c.reply, items)
			if (err != nil) != c.err || (c.err && !errors.Is(err, ErrHeartbeatGroups)) {
				t.Fatalf("err %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestHeartbeatOK(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		text string
	}{
		{"HEARTBEAT_OK", true, ""},
		{"**HEARTBEAT_OK**", true, ""},
		{"`HEARTBEAT_OK`.", true, ""},
		{"", true, ""},
		{"Time to stretch!\nHEARTBEAT_OK", false, "Time to stretch!"},
		{"## Disk at 95%", false, "## Disk at 95%"},
	}
	for _, c := range cases {
		ok, text := HeartbeatOK(c.in)
		if ok != c.ok || text != c.text {
			t.Errorf("HeartbeatOK(%q) = %v %q, want %v %q", c.in, ok, text, c.ok, c.text)
		}
	}
}

func TestHeartbeatCycleSteps(t *testing.T) {
	var c HeartbeatCycle
	apply := func(p domain.Payload) { c.Apply(p, c.Version+1, time.Time{}) }
	if c.Next() != HeartbeatStepNone {
		t.Fatal("unstarted cycle has a step")
	}
	apply(HeartbeatCycleStarted{Scope: "global", Items: []string{"a", "b"}})
	if c.Next() != HeartbeatStepClassify {
		t.Fatal("want classify")
	}
	apply(HeartbeatClassified{Groups: []HeartbeatGroup{{"x", []string{"a"}}, {"y", []string{"b"}}}})
	if c.Next() != HeartbeatStepCall || !reflect.DeepEqual(c.PendingGroups(), []int{0, 1}) {
		t.Fatalf("want both groups called, got %v", c.PendingGroups())
	}
	apply(HeartbeatGroupCalled{Group: 0})
	apply(HeartbeatGroupCalled{Group: 1})
	apply(HeartbeatGroupReplied{Group: 0, Raw: "HEARTBEAT_OK"})
	// A crash after group 1's call: it is called once more, group 0 never.
	if got := c.PendingGroups(); !reflect.DeepEqual(got, []int{1}) {
		t.Fatalf("pending after a lost reply: %v", got)
	}
	apply(HeartbeatGroupCalled{Group: 1})
	if got := c.PendingGroups(); len(got) != 0 {
		t.Fatalf("a group is called at most %d times: %v", MaxHeartbeatGroupCalls, got)
	}
	apply(HeartbeatGroupReplied{Group: 1, Raw: "Stretch"})
	if c.Next() != HeartbeatStepProcess {
		t.Fatal("want process")
	}
	apply(HeartbeatGroupProcessed{Group: 0, OK: true})
	apply(HeartbeatGroupProcessed{Group: 1, Text: "Stretch"})
	if c.Next() != HeartbeatStepAlert || c.AlertText() != "Heartbeat:\n\nStretch" {
		t.Fatalf("want alert, got %v %q", c.Next(), c.AlertText())
	}
	apply(HeartbeatAlertStarted{Text: "Stretch"})
	apply(HeartbeatAlertSent{})
	if c.Next() != HeartbeatStepComplete || c.Outcome() != HeartbeatSent {
		t.Fatalf("want complete/sent, got %v %s", c.Next(), c.Outcome())
	}
}

func TestHeartbeatFileImportAndExport(t *testing.T) {
	text := "# My checklist\n\n- Drink water\n* drink WATER\n## HOME — chores\nWater the plants\n"
	items := ParseHeartbeatFile(text)
	if want := []string{"Drink water", "drink WATER", "## HOME — chores", "Water the plants"}; !reflect.DeepEqual(items, want) {
		t.Fatalf("parsed %q", items)
	}
	var h Heartbeat
	apply := func(ps []domain.Payload) {
		for _, p := range ps {
			h.Apply(p, h.Version+1, time.Time{})
		}
	}
	apply(h.Add("Drink Water"))
	apply(h.Import("/p/HEARTBEAT.md", "h1", items))
	if want := []string{"Drink Water", "## HOME — chores", "Water the plants"}; !reflect.DeepEqual(h.Items, want) {
		t.Fatalf("imported %q", h.Items)
	}
	if ps := h.Import("/p/HEARTBEAT.md", "h1", items); ps != nil {
		t.Fatalf("unchanged file imported again: %v", ps)
	}
	ps := h.Import("/p/HEARTBEAT.md", "h2", append(items, "Call mum"))
	if len(ps) != 2 {
		t.Fatalf("changed file: %v", ps)
	}
	apply(ps)
	if got := h.Export(); got != "- Drink Water\n\n## HOME — chores\n- Water the plants\n- Call mum\n" {
		t.Fatalf("export %q", got)
	}
	if got := ParseHeartbeatFile(h.Export()); !reflect.DeepEqual(got, h.Items) {
		t.Fatalf("export does not round-trip: %q", got)
	}
}
