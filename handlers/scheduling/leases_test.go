package scheduling

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/scheduling/lease"
	"github.com/omega-gateway/omega/projections"
)

// fakeLeases is a lease table in memory that counts what it is asked.
type fakeLeases struct {
	holds          map[string]eventstore.LeaseHold
	acquires       int
	reads, renewal int
	renewed        []string // the keys last asked to renew
}

func (f *fakeLeases) AcquireLease(_ context.Context, key, owner string, until, now time.Time) (bool, error) {
	f.acquires++
	if h, ok := f.holds[key]; ok && h.Owner != owner && !h.Until.Before(now) {
		return false, nil
	}
	f.holds[key] = eventstore.LeaseHold{Owner: owner, Until: until}
	return true, nil
}

func (f *fakeLeases) ReleaseLease(_ context.Context, key, owner string) error {
	if f.holds[key].Owner == owner {
		delete(f.holds, key)
	}
	return nil
}

func (f *fakeLeases) LeaseHolds(_ context.Context, keys []string, now time.Time) (map[string]eventstore.LeaseHold, error) {
	f.reads++
	out := map[string]eventstore.LeaseHold{}
	for _, k := range keys {
		if h, ok := f.holds[k]; ok && !h.Until.Before(now) {
			out[k] = h
		}
	}
	return out, nil
}

func (f *fakeLeases) RenewLeases(_ context.Context, keys []string, owner string, until time.Time) ([]string, error) {
	f.renewal++
	f.renewed = slices.Clone(keys)
	var out []string
	for _, k := range keys {
		if f.holds[k].Owner == owner {
			f.holds[k] = eventstore.LeaseHold{Owner: owner, Until: until}
			out = append(out, k)
		}
	}
	return out, nil
}

func testScheduler(t *testing.T, store *fakeLeases) *Scheduler {
	t.Helper()
	l, err := lease.New(store, "me", 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &Scheduler{leases: l, logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		active: map[string]*worker{}, busy: map[string]time.Time{}}
}

// One write renews every chat running here; a worker whose lease another
// process took is stopped, one giving its lease up is left alone.
func TestRenewLeasesInOneWrite(t *testing.T) {
	later := time.Now().Add(time.Minute)
	store := &fakeLeases{holds: map[string]eventstore.LeaseHold{
		"a": {Owner: "me", Until: later}, "b": {Owner: "other", Until: later}, "c": {Owner: "me", Until: later}}}
	s := testScheduler(t, store)
	stopped := map[string]bool{}
	for _, chat := range []string{"a", "b", "c"} {
		s.active[chat] = &worker{lost: func() { stopped[chat] = true }}
	}
	s.active["c"].leaving = true
	s.renewOnce(context.Background())
	if store.renewal != 1 || !slices.Equal(sorted(store.renewed), []string{"a", "b"}) {
		t.Fatalf("%d renewals of %q, want one of a and b (c is being released)", store.renewal, store.renewed)
	}
	if !stopped["b"] || stopped["a"] || stopped["c"] {
		t.Fatalf("stopped %v, want only b (its lease is another process's)", stopped)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// A sweep leaves young turns received elsewhere alone, reads the leases
// of the rest before writing, and does not read again a lease it saw held
// until recheckBusy has passed; the first sweep (a restart) takes at once
// every chat whose lease is its own and whose turn was waiting when the
// process started, and leaves a young turn whose lease nobody holds yet,
// or one received since, to the process that received it.
func TestAdoptOnlyWhatNobodyRuns(t *testing.T) {
	now := time.Now()
	store := &fakeLeases{holds: map[string]eventstore.LeaseHold{
		"held": {Owner: "other", Until: now.Add(time.Minute)}, "mine": {Owner: "me", Until: now.Add(time.Minute)}}}
	s := testScheduler(t, store)
	s.started = now.Add(-time.Millisecond)
	old, young, sinceStart := now.Add(-2*adoptAfter), now.Add(-2*time.Millisecond), now
	heads := []projections.OpenTurn{{Chat: "held", ReceivedAt: old}, {Chat: "mine", ReceivedAt: young},
		{Chat: "free", ReceivedAt: old}, {Chat: "new", ReceivedAt: young}, {Chat: "elsewhere", ReceivedAt: sinceStart}}
	ctx := context.Background()

	first, err := s.adoptable(ctx, slices.Clone(heads), true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, []string{"mine", "free"}) || store.reads != 1 {
		t.Fatalf("first sweep adopts %q after %d reads, want mine and free after one", first, store.reads)
	}
	later, err := s.adoptable(ctx, slices.Clone(heads), false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(later, []string{"free"}) || store.reads != 2 {
		t.Fatalf("a later sweep adopts %q after %d reads, want only the old free one after two", later, store.reads)
	}
	s.start(ctx, "held", "kicked") // a kick for a chat seen held: no write
	if store.acquires != 0 {
		t.Fatalf("%d lease writes, want none", store.acquires)
	}
	s.busy["held"] = now.Add(-time.Millisecond) // recheckBusy passed
	again, err := s.adoptable(ctx, heads[:1], false)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 || store.reads != 3 {
		t.Fatalf("adopted %q after %d reads, want none after a third read", again, store.reads)
	}
}
