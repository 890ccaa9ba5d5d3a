package app_test

import (
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/internal/pgtest"
)

// countLeaseWrites makes the database count every attempt to take a lease
// (each upsert, whether it takes the row or finds it held) by owner: a
// BEFORE INSERT trigger runs before the conflict is found.
func countLeaseWrites(t *testing.T, db *sql.DB) func() map[string]int {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE lease_writes (owner TEXT NOT NULL)`,
		`CREATE FUNCTION count_lease_write() RETURNS trigger AS $$
			BEGIN INSERT INTO lease_writes (owner) VALUES (NEW.owner); RETURN NEW; END $$ LANGUAGE plpgsql`,
		`CREATE TRIGGER count_lease_writes BEFORE INSERT ON sender_leases FOR EACH ROW EXECUTE FUNCTION count_lease_write()`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return func() map[string]int {
		rows, err := db.Query(`SELECT owner, count(*) FROM lease_writes GROUP BY owner`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var owner string
			var n int
			if err := rows.Scan(&owner, &n); err != nil {
				t.Fatal(err)
			}
			out[owner] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// Two processes on one database; every message goes to the first, in
// bursts that keep turns queued for over a second. The second process
// sees those turns in its read model but never tries to take their
// chats' leases (the first holds them), and the first takes at most one
// lease per turn: a process leases a chat only where its work is.
func TestIdleProcessLeavesHeldLeasesAlone(t *testing.T) {
	claude, callLog := fakeClaude(t)
	vars := baseVars(t, backend{"postgres", func(*testing.T) map[string]string {
		return map[string]string{"OMEGA_DATABASE_URL": pgtest.DSN(t)}
	}}, claude)
	a := startNode(t, vars)
	writes := countLeaseWrites(t, a.rt.DBForTests())
	varsB := map[string]string{}
	for k, v := range vars {
		varsB[k] = v
	}
	varsB["OMEGA_DATA_DIR"] = t.TempDir()
	startNode(t, varsB)

	const senders, burst = 4, 5
	var ids []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range burst {
				id := say(t, a, fmt.Sprintf("user-%d", s), fmt.Sprintf("slow job %d", i), "0s").TurnID
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	waitFor(t, "every turn", func() bool {
		for _, id := range ids {
			if countType(turnEvents(t, a, id), completed) != 1 {
				return false
			}
		}
		return true
	})
	if n := len(calls(t, callLog)); n != len(ids) {
		t.Fatalf("provider called %d times for %d turns", n, len(ids))
	}
	byOwner := writes()
	if len(byOwner) != 1 {
		t.Fatalf("lease writes by owner %v: want the receiving process's only", byOwner)
	}
	for owner, n := range byOwner {
		if n > len(ids) {
			t.Fatalf("%s tried to take a lease %d times for %d turns", owner, n, len(ids))
		}
	}
}
