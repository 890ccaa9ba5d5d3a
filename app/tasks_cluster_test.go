package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/pgtest"
)

// Two processes on one PostgreSQL, 200 reminders due within the same few
// seconds, scheduled after both started (so each learns of them from the
// log): every reminder is delivered exactly once, by one of them.
func TestTasksTwoProcessesDeliverOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	claude, _ := fakeClaude(t)
	vars := baseVars(t, backend{"postgres", func(*testing.T) map[string]string { return map[string]string{"OMEGA_DATABASE_URL": dsn} }}, claude)
	chA, chB := &fakeChannel{name: "testchat"}, &fakeChannel{name: "testchat"}
	a := startNode(t, vars, chA)
	b := startNode(t, vars, chB)
	waitFor(t, "both clocks running", func() bool { return a.rt.Buses.Router.IsRunning() && b.rt.Buses.Router.IsRunning() })

	const n = 200
	start := time.Now().Add(3 * time.Second)
	scheduleTasksFrom(t, a.rt.Store, a.rt.Registry, 0, n, func(i int) time.Time {
		return start.Add(time.Duration(i%3) * time.Second)
	})
	waitFor(t, "every reminder sent", func() bool { return len(chA.texts("allowed"))+len(chB.texts("allowed")) >= n })
	time.Sleep(time.Second) // room for a duplicate to show
	seen := map[string]int{}
	for _, text := range append(chA.texts("allowed"), chB.texts("allowed")...) {
		seen[text]++
	}
	for i := range n {
		if c := seen[fmt.Sprintf("⏰ Reminder: task %d", i)]; c != 1 {
			t.Errorf("task %d delivered %d times", i, c)
		}
	}
	t.Logf("process A sent %d, process B sent %d", len(chA.texts("allowed")), len(chB.texts("allowed")))
	var delivered int
	if err := a.rt.DBForTests().QueryRow(`SELECT count(*) FROM events WHERE type = 'TaskDelivered'`).Scan(&delivered); err != nil {
		t.Fatal(err)
	}
	if delivered != n {
		t.Fatalf("%d deliveries recorded, want %d", delivered, n)
	}
}
