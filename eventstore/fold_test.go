package eventstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
)

// facts folds a sender stream, remembering the causation ids it saw.
type facts struct {
	values  map[string]string
	causes  []string
	version int64
}

func (f *facts) Apply(p domain.Payload, version int64, _ time.Time) {
	if r, ok := p.(sender.FactRecorded); ok {
		f.values[r.Key] = r.Value
	}
	f.version = version
}

func (f *facts) Observe(e domain.Event) { f.causes = append(f.causes, e.Metadata.CausationID) }

func newFacts() *facts { return &facts{values: map[string]string{}} }

func open(t *testing.T) (eventstore.Store, *domain.Registry) {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	reg := events.NewRegistry()
	return s, reg
}

func record(key, value string) func(*facts) ([]domain.Payload, error) {
	return func(*facts) ([]domain.Payload, error) {
		return []domain.Payload{sender.FactRecorded{Key: key, Value: value}}, nil
	}
}

// Update decides on the state it folded and appends at the version it
// read; a writer that got there first makes it fold and decide again,
// so the decision always sees every earlier event.
func TestUpdateDecidesAgainAfterAConflict(t *testing.T) {
	ctx := context.Background()
	s, reg := open(t)
	const stream = "sender-test-1"
	if _, _, err := eventstore.Update(ctx, s, reg, stream, domain.Metadata{CausationID: "first"}, newFacts, record("city", "Lisbon")); err != nil {
		t.Fatal(err)
	}
	attempts := 0
	got, res, err := eventstore.Update(ctx, s, reg, stream, domain.Metadata{CausationID: "second"}, newFacts,
		func(f *facts) ([]domain.Payload, error) {
			attempts++
			if attempts == 1 { // another writer appends between fold and append
				if _, _, err := eventstore.Update(ctx, s, reg, stream, domain.Metadata{CausationID: "racer"}, newFacts, record("food", "pasta")); err != nil {
					t.Fatal(err)
				}
			}
			return []domain.Payload{sender.FactRecorded{Key: "seen", Value: f.values["food"]}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || got.values["seen"] != "pasta" || res.ToVersion != 3 || got.version != 3 {
		t.Fatalf("attempts %d, state %+v, result %+v", attempts, got, res)
	}
	folded := newFacts()
	if _, err := eventstore.Fold(ctx, s, reg, stream, folded); err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "racer", "second"}; len(folded.causes) != 3 || folded.causes[0] != want[0] || folded.causes[1] != want[1] || folded.causes[2] != want[2] {
		t.Fatalf("observed causes %v, want %v", folded.causes, want)
	}
}

// A decision's error is returned and nothing is appended.
func TestUpdateAppendsNothingWhenTheDecisionFails(t *testing.T) {
	ctx := context.Background()
	s, reg := open(t)
	refused := errors.New("refused")
	_, _, err := eventstore.Update(ctx, s, reg, "sender-test-2", domain.Metadata{}, newFacts,
		func(*facts) ([]domain.Payload, error) { return nil, refused })
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v", err)
	}
	if v, err := eventstore.Fold(ctx, s, reg, "sender-test-2", newFacts()); err != nil || v != 0 {
		t.Fatalf("version %d, %v", v, err)
	}
}

// FoldUntil is the stream as it stood before the first event refused:
// the same fold, stopped there, with the version reached.
func TestFoldUntilStopsAtTheFirstRefusedEvent(t *testing.T) {
	ctx := context.Background()
	s, reg := open(t)
	const stream = "sender-test-2"
	for _, v := range []string{"Lisbon", "Porto", "Faro"} {
		if _, _, err := eventstore.Update(ctx, s, reg, stream, domain.Metadata{CausationID: v}, newFacts, record("city", v)); err != nil {
			t.Fatal(err)
		}
	}
	got := newFacts()
	version, err := eventstore.FoldUntil(ctx, s, reg, stream, got, func(e domain.Event) bool { return e.Metadata.CausationID != "Faro" })
	if err != nil || version != 2 || got.values["city"] != "Porto" || len(got.causes) != 2 {
		t.Fatalf("version %d, state %+v, %v", version, got, err)
	}
	all := newFacts()
	if version, err := eventstore.FoldUntil(ctx, s, reg, stream, all, nil); err != nil || version != 3 || all.values["city"] != "Faro" {
		t.Fatalf("nil keeps all: version %d, state %+v, %v", version, all, err)
	}
}
