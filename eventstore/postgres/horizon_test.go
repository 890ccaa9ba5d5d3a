package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// A read awaiting an own commit that an older transaction keeps out of
// the delivery order waits in the server until that transaction ends, and
// gives up after its bound with what is readable.
func TestReadAwaitingWaitsForTheHorizon(t *testing.T) {
	s := openTest(t)
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := appendOne(ctx, t, s, "horizon-a")

	for _, tc := range []struct {
		name    string
		wait    time.Duration
		commits bool // the older transaction ends while the read waits
	}{
		{"the older transaction ends", 30 * time.Second, true},
		{"the bound passes first", 50 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			older, err := s.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = older.Rollback() }()
			var xid string
			if err := older.QueryRowContext(ctx, "SELECT pg_current_xact_id()::text").Scan(&xid); err != nil {
				t.Fatal(err)
			}
			awaited := appendOne(ctx, t, s, "horizon-b")
			if evs, err := s.ReadAll(ctx, first, 10); err != nil || len(evs) != 0 {
				t.Fatalf("read behind a running transaction = %v, %v; want nothing yet", evs, err)
			}

			type result struct {
				evs []domain.Event
				err error
			}
			done := make(chan result, 1)
			go func() {
				evs, err := s.readAwaitingFor(ctx, first, 10, awaited, tc.wait)
				done <- result{evs, err}
			}()
			if tc.commits {
				select {
				case r := <-done:
					t.Fatalf("the read returned %v, %v while the older transaction %s still ran", r.evs, r.err, xid)
				case <-time.After(200 * time.Millisecond):
				}
				if err := older.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			var got []int64
			for _, e := range r.evs {
				got = append(got, e.Position)
			}
			if readable := len(got) > 0 && got[len(got)-1] == awaited; readable != tc.commits {
				t.Fatalf("read %v; awaited %d readable = %v, want %v", got, awaited, readable, tc.commits)
			}
			if !tc.commits {
				_ = older.Rollback()
			}
			first = awaited
		})
	}
}

func appendOne(ctx context.Context, t *testing.T, s *Store, stream string) int64 {
	t.Helper()
	res, err := s.Append(ctx, stream, eventstore.Any, newEvent(t, "Tested"))
	if err != nil {
		t.Fatal(err)
	}
	return res.Positions[0]
}
