package migrations

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/lib/pq"

	"github.com/omega-gateway/omega/internal/pgtest"
)

// The migration lock is waited for, not tried: a second session blocks
// until the first releases it, then has it.
func TestWaitingLockerHandsOver(t *testing.T) {
	db, err := sql.Open("postgres", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// An id of this test's own: the shared database runs other tests'
	// migrations meanwhile.
	l := waitingLocker{id: 0x0e9a_7e57}
	first, second := conn(), conn()
	if err := l.SessionLock(ctx, first); err != nil {
		t.Fatal(err)
	}
	taken := make(chan error, 1)
	go func() { taken <- l.SessionLock(ctx, second) }()
	var free bool
	if err := db.QueryRow(`SELECT pg_try_advisory_lock($1)`, l.id).Scan(&free); err != nil || free {
		t.Fatalf("a third session took the held lock (%v, %v)", free, err)
	}
	select {
	case err := <-taken:
		t.Fatalf("the second session took the held lock (%v)", err)
	default:
	}
	if err := l.SessionUnlock(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := <-taken; err != nil {
		t.Fatalf("the second session did not get the released lock: %v", err)
	}
	if err := l.SessionUnlock(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := l.SessionUnlock(ctx, second); err == nil {
		t.Fatal("releasing a lock not held did not fail")
	}
}
